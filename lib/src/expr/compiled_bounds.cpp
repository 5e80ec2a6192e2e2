// CompiledExpression::within(): interval arithmetic over an expression's
// tree, compiled once into a postfix program without jumps (both branches
// of and/or/if-else are bounded and combined). Ranges hold ints only; every
// operation whose result could leave int64 or fail (overflow, division by a
// range holding 0) gives "any value". Source: R. E. Moore, "Interval
// Analysis" (1966) for the arithmetic; Python 3 language reference §6.11
// (and/or return the operand that decides) for the logic.
#include <algorithm>
#include <limits>
#include <optional>

#include "expr/compiled.hpp"
#include "expr/expr_program.hpp"

namespace wstune::expr {

namespace {

using Range = CompiledExpression::Range;
using detail::Builtin;
using detail::CmpOp;
using detail::Op;
using i64 = std::int64_t;

enum BoundCode : std::uint8_t {
  s_const,         // push bound_consts[arg]
  s_slot,          // push the slot arg's range
  s_any,           // push any value (aux 1: or an error)
  s_unary,         // x -> OP x (aux: Op; not included)
  s_binary,        // x y -> x OP y (aux: Op)
  s_binary_slot,   // x -> x OP slot arg
  s_binary_const,  // x -> x OP bound_consts[arg]
  s_logic,         // arg operands -> their and/or (aux: Op)
  s_compare,       // arg operands -> the chain (operators from bound_cmps[extra])
  s_ifelse,        // body condition orelse -> the value
  s_call,          // arg arguments -> builtin aux
};

const Range kAny{};                    // some value, which reading cannot fail
const Range kFail{0, 0, false, true};  // some value, or an error

Range exact(i64 lo, i64 hi, bool fails = false) {
  return Range{lo, hi, true, fails};
}
// 0: always falsy, 1: always truthy, 2: either.
int truth(const Range& r) {
  if (!r.known) return 2;
  if (r.lo == 0 && r.hi == 0) return 0;
  if (r.lo > 0 || r.hi < 0) return 1;
  return 2;
}
Range truth_range(int t, bool fails) {
  return t == 2 ? exact(0, 1, fails) : exact(t, t, fails);
}
Range hull(const Range& a, const Range& b) {
  const bool fails = a.fails || b.fails;
  if (!a.known || !b.known) return Range{0, 0, false, fails};
  return exact(std::min(a.lo, b.lo), std::max(a.hi, b.hi), fails);
}

// The smallest and largest of f over the corners of a × b; an error when one overflows.
template <class F>
Range corners(const Range& a, const Range& b, F&& f) {
  i64 v[4];
  const i64 xs[2] = {a.lo, a.hi}, ys[2] = {b.lo, b.hi};
  for (int k = 0; k < 4; ++k)
    if (!f(xs[k / 2], ys[k % 2], v[k])) return kFail;
  return exact(*std::min_element(v, v + 4), *std::max_element(v, v + 4));
}

Range range_floordiv(const Range& a, const Range& b) {
  // Monotone in each operand where the divisor keeps one sign: the extremes are corners.
  if (b.lo <= 0 && b.hi >= 0) return kFail;
  return corners(a, b, [](i64 x, i64 y, i64& r) {
    if (x == std::numeric_limits<i64>::min() && y == -1) return false;
    r = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0))) --r;
    return true;
  });
}

// x OP y on ints; an error where it may overflow, divide by 0 or is not covered.
Range int_range(Op op, const Range& a, const Range& b) {
  Range r{0, 0, true, false};
  switch (op) {
    case Op::add:
      if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return kFail;
      return r;
    case Op::sub:
      if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi)) return kFail;
      return r;
    case Op::mul:
      return corners(a, b, [](i64 x, i64 y, i64& v) { return !__builtin_mul_overflow(x, y, &v); });
    case Op::floordiv:
      return range_floordiv(a, b);
    case Op::mod:
      if (b.lo > 0) return a.lo >= 0 && a.hi < b.lo ? exact(a.lo, a.hi) : exact(0, b.hi - 1);
      if (b.hi < 0) return exact(b.lo + 1, 0);
      return kFail;
    default:
      return kFail;
  }
}

Range range_binary(Op op, const Range& a, const Range& b) {
  if (!a.known || !b.known) return kFail;  // a float by 0, a str and an int, ...
  Range r = int_range(op, a, b);
  r.fails = r.fails || a.fails || b.fails;
  return r;
}

// a += b or a -= b in place when both are known and it does not overflow
// (the common steps of a sum, without copying a Range back); false else.
bool add_in_place(Op op, Range& a, const Range& b) {
  if (!a.known || !b.known || (op != Op::add && op != Op::sub)) return false;
  i64 lo = 0, hi = 0;
  if (op == Op::add ? (__builtin_add_overflow(a.lo, b.lo, &lo) || __builtin_add_overflow(a.hi, b.hi, &hi))
                    : (__builtin_sub_overflow(a.lo, b.hi, &lo) || __builtin_sub_overflow(a.hi, b.lo, &hi)))
    return false;
  a.lo = lo;
  a.hi = hi;
  a.fails = a.fails || b.fails;
  return true;
}

Range range_unary(Op op, const Range& a) {
  if (op == Op::not_) {
    const int t = truth(a);
    return truth_range(t == 2 ? 2 : 1 - t, a.fails);
  }
  if (!a.known) return kFail;
  if (op == Op::pos) return a;
  if (op == Op::invert) return exact(~a.hi, ~a.lo, a.fails);
  if (a.lo == std::numeric_limits<i64>::min()) return kFail;
  return exact(-a.hi, -a.lo, a.fails);
}

// 0, 1 or 2 (either) for x OP y over int ranges.
int range_compare(CmpOp op, const Range& x, const Range& y) {
  if (!x.known || !y.known) return 2;
  switch (op) {
    case CmpOp::lt:
      return x.hi < y.lo ? 1 : (x.lo >= y.hi ? 0 : 2);
    case CmpOp::le:
      return x.hi <= y.lo ? 1 : (x.lo > y.hi ? 0 : 2);
    case CmpOp::gt:
      return range_compare(CmpOp::lt, y, x);
    case CmpOp::ge:
      return range_compare(CmpOp::le, y, x);
    case CmpOp::eq:
      if (x.hi < y.lo || y.hi < x.lo) return 0;
      return x.lo == x.hi && y.lo == y.hi ? 1 : 2;
    case CmpOp::ne: {
      const int e = range_compare(CmpOp::eq, x, y);
      return e == 2 ? 2 : 1 - e;
    }
    default:
      return 2;
  }
}

// a < b <= c ...: false when a link surely fails, true when every one holds;
// the operands after a false link are never evaluated (their errors do not count).
Range range_chain(const Range* operands, std::uint32_t n, const std::uint8_t* ops) {
  int all = 1;
  bool fails = operands[0].fails;
  for (std::uint32_t k = 1; k < n; ++k) {
    const auto op = static_cast<CmpOp>(ops[k - 1]);
    const bool ordered = op != CmpOp::eq && op != CmpOp::ne;  // <, in, ... may fail on other types
    fails = fails || operands[k].fails || ((!operands[k - 1].known || !operands[k].known) && ordered);
    const int t = range_compare(op, operands[k - 1], operands[k]);
    if (t == 0) return exact(0, 0, fails);
    if (t == 2) all = 2;
  }
  return truth_range(all, fails);
}

// The operand that decides: a falsy one for and (a truthy one for or), else
// the last; the operands after it are never evaluated.
Range range_logic(Op op, const Range* operands, std::uint32_t n) {
  const int stop = op == Op::or_ ? 1 : 0;
  std::optional<Range> acc;
  bool fails = false;
  for (std::uint32_t k = 0; k < n; ++k) {
    const Range& r = operands[k];
    fails = fails || r.fails;
    const int t = truth(r);
    if (k + 1 == n || t == stop) {
      Range out = acc ? hull(*acc, r) : r;
      out.fails = fails;
      return out;
    }
    if (t == 2) acc = acc ? hull(*acc, r) : r;
  }
  return kFail;
}

Range range_call(Builtin f, const Range* args, std::uint32_t n) {
  bool fails = false;
  bool known = true;
  for (std::uint32_t k = 0; k < n; ++k) {
    fails = fails || args[k].fails;
    known = known && args[k].known;
  }
  if (f == Builtin::bool_ && n == 1) return truth_range(truth(args[0]), fails);
  if (!known || n == 0) return kFail;
  if ((f == Builtin::min || f == Builtin::max) && n >= 2) {
    Range r = args[0];
    for (std::uint32_t k = 1; k < n; ++k)
      r = f == Builtin::min ? exact(std::min(r.lo, args[k].lo), std::min(r.hi, args[k].hi))
                            : exact(std::max(r.lo, args[k].lo), std::max(r.hi, args[k].hi));
    r.fails = fails;
    return r;
  }
  const Range& a = args[0];
  if (n != 1) return kFail;
  if (f == Builtin::int_ || f == Builtin::round) return a;  // ranges hold ints only
  if (f != Builtin::abs || a.lo == std::numeric_limits<i64>::min()) return kFail;
  if (a.lo >= 0) return a;
  if (a.hi <= 0) return exact(-a.hi, -a.lo, fails);
  return exact(0, std::max(-a.lo, a.hi), fails);
}

}  // namespace

// ---- building the interval program ----------------------------------------------

namespace {

class BoundsBuilder {
 public:
  BoundsBuilder(const detail::Program& p, const std::vector<std::int32_t>& slot,
                const std::vector<std::int32_t>& constant, const std::vector<CompiledExpression::Cell>& consts)
      : p_(p), slot_(slot), const_(constant), consts_(consts) {}

  std::vector<CompiledExpression::Step> steps;
  std::vector<Range> constants;
  std::vector<std::uint8_t> cmps;
  std::size_t max_depth = 0;

  void node(std::uint32_t i) {
    if (leaf(i)) return;
    const detail::Node& n = p_.nodes[i];
    switch (n.op) {
      case Op::neg:
      case Op::pos:
      case Op::invert:
      case Op::not_:
        node(n.a);
        return emit(s_unary, static_cast<std::uint8_t>(n.op), 0, 0, 0);
      case Op::and_:
      case Op::or_:
      case Op::call:
        for (std::uint32_t k = 0; k < n.count; ++k) node(p_.kids[n.first + k]);
        return emit(n.op == Op::call ? s_call : s_logic, n.op == Op::call ? n.aux : static_cast<std::uint8_t>(n.op),
                    n.count, 0, 1 - static_cast<int>(n.count));
      case Op::compare:
        return chain(n);
      case Op::ifelse:
        node(n.a);
        node(n.b);
        node(n.c);
        return emit(s_ifelse, 0, 0, 0, -2);
      case Op::list:
      case Op::subscript:
      case Op::comprehension:
      case Op::constant:
      case Op::name:
        return emit(s_any, 1, 0, 0, 1);  // anything, perhaps an error
      default:
        return binary(n);
    }
  }

 private:
  void emit(BoundCode code, std::uint8_t aux, std::uint32_t arg, std::uint32_t extra, int depth_change) {
    steps.push_back(CompiledExpression::Step{code, aux, arg, extra});
    depth_ += depth_change;
    max_depth = std::max(max_depth, static_cast<std::size_t>(std::max(depth_, 0)));
  }

  // A folded constant or a slot: one step.
  bool leaf(std::uint32_t i) {
    if (const_[i] == -2 && slot_[i] < 0) return false;
    if (slot_[i] >= 0) {
      emit(s_slot, 0, static_cast<std::uint32_t>(slot_[i]), 0, 1);
    } else if (const_[i] >= 0) {
      emit(s_const, 0, constant(i), 0, 1);
    } else {
      emit(s_any, const_[i] == -3 ? 1 : 0, 0, 0, 1);  // a float constant, or a subtree that fails
    }
    return true;
  }

  std::uint32_t constant(std::uint32_t i) {
    const i64 v = consts_[static_cast<std::size_t>(const_[i])].i;
    constants.push_back(exact(v, v));
    return static_cast<std::uint32_t>(constants.size() - 1);
  }

  void binary(const detail::Node& n) {
    node(n.a);
    const auto op = static_cast<std::uint8_t>(n.op);
    if (slot_[n.b] >= 0) return emit(s_binary_slot, op, static_cast<std::uint32_t>(slot_[n.b]), 0, 0);
    if (const_[n.b] >= 0) return emit(s_binary_const, op, constant(n.b), 0, 0);
    node(n.b);
    emit(s_binary, op, 0, 0, -1);
  }

  void chain(const detail::Node& n) {
    for (std::uint32_t k = 0; k < n.count; ++k) node(p_.kids[n.first + k]);
    const auto first = static_cast<std::uint32_t>(cmps.size());
    for (std::uint32_t k = 0; k + 1 < n.count; ++k)
      cmps.push_back(static_cast<std::uint8_t>(p_.comparisons[n.c + k].op));
    emit(s_compare, 0, n.count, first, 1 - static_cast<int>(n.count));
  }

  const detail::Program& p_;
  const std::vector<std::int32_t>& slot_;
  const std::vector<std::int32_t>& const_;
  const std::vector<CompiledExpression::Cell>& consts_;
  int depth_ = 0;
};

}  // namespace

void CompiledExpression::build_bounds() {
  BoundsBuilder b(*expr_.program_, node_slot_, node_const_, consts_);
  b.node(expr_.program_->root);
  bounds_ = std::move(b.steps);
  bound_consts_ = std::move(b.constants);
  bound_cmps_ = std::move(b.cmps);
  bounds_depth_ = b.max_depth;
}

CompiledExpression::Truth CompiledExpression::within(std::span<const Range> ranges) const {
  if (interpreted_ || bounds_.empty()) return Truth::maybe;
  constexpr std::size_t kInline = 32;
  Range inline_stack[kInline];
  std::vector<Range> heap;
  Range* st = inline_stack;
  if (bounds_depth_ > kInline) {
    heap.resize(bounds_depth_);
    st = heap.data();
  }
  std::size_t top = 0;
  for (const Step& s : bounds_) {
    switch (s.code) {
      case s_const:
        st[top++] = bound_consts_[s.arg];
        break;
      case s_slot:
        st[top++] = ranges[s.arg];
        break;
      case s_any:
        st[top++] = s.aux ? kFail : kAny;
        break;
      case s_unary:
        st[top - 1] = range_unary(static_cast<Op>(s.aux), st[top - 1]);
        break;
      case s_binary:
        st[top - 2] = range_binary(static_cast<Op>(s.aux), st[top - 2], st[top - 1]);
        --top;
        break;
      case s_binary_slot:
      case s_binary_const: {
        const Range& y = s.code == s_binary_slot ? ranges[s.arg] : bound_consts_[s.arg];
        if (!add_in_place(static_cast<Op>(s.aux), st[top - 1], y))
          st[top - 1] = range_binary(static_cast<Op>(s.aux), st[top - 1], y);
        break;
      }
      case s_ifelse: {
        const Range& cond = st[top - 2];
        const int t = truth(cond);
        Range r = t == 1 ? st[top - 3] : (t == 0 ? st[top - 1] : hull(st[top - 3], st[top - 1]));
        r.fails = r.fails || cond.fails;
        st[top - 3] = r;
        top -= 2;
        break;
      }
      default: {  // s_logic, s_compare, s_call: arg operands
        Range* ops = st + top - s.arg;
        const Range r = s.code == s_logic     ? range_logic(static_cast<Op>(s.aux), ops, s.arg)
                        : s.code == s_compare ? range_chain(ops, s.arg, bound_cmps_.data() + s.extra)
                                              : range_call(static_cast<Builtin>(s.aux), ops, s.arg);
        top -= s.arg;
        st[top++] = r;
        break;
      }
    }
  }
  const int t = truth(st[0]);
  if (st[0].fails) return Truth::maybe;
  return t == 0 ? Truth::never : (t == 1 ? Truth::always : Truth::maybe);
}

}  // namespace wstune::expr
