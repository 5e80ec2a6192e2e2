// CompiledExpression: a T1 expression as a stack program over numbers, with
// the interpreter as the exact fallback (compiled.hpp).
#include "expr/compiled.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "expr/expr_program.hpp"

namespace wstune::expr {

namespace {

using detail::Builtin;
using detail::CmpOp;
using detail::Node;
using detail::Op;
using detail::Program;
using Cell = CompiledExpression::Cell;
using Ins = CompiledExpression::Instruction;
using CK = Cell::Kind;
using i64 = std::int64_t;

// The stack program's instructions.
enum Code : std::uint8_t {
  k_const,              // push consts[arg]
  k_slot,               // push slot arg's cell
  k_unary,              // x -> OP x (aux: Op)
  k_not,                // x -> not x
  k_binary,             // x y -> x OP y (aux: Op)
  k_binary_slot,        // x -> x OP slot arg (aux: Op)
  k_binary_const,       // x -> x OP consts[arg] (aux: Op)
  k_cmp,                // x y -> x OP y (aux: CmpOp)
  k_cmp_slot,           // x -> x OP slot arg (aux: CmpOp)
  k_cmp_const,          // x -> x OP consts[arg] (aux: CmpOp)
  k_cmp_chain,          // x y -> y when x OP y, else False and jump to arg
  k_in,                 // x -> x in lists[arg] (aux 1: not in)
  k_jump_false_or_pop,  // falsy top: jump to arg keeping it; else pop
  k_jump_true_or_pop,   // truthy top: jump to arg keeping it; else pop
  k_pop_jump_false,     // pop; falsy: jump to arg
  k_jump,               // jump to arg
  k_call,               // aux: Builtin; arg: argument count; arguments -> result
  k_bail,               // the interpreter decides
};

constexpr std::size_t kMaxStack = 32;
constexpr i64 kExact = i64{1} << 53;  // ints up to this convert to double exactly

Cell make_int(i64 v) {
  Cell c;
  c.i = v;
  c.kind = CK::integer;
  return c;
}
Cell make_bool(bool v) {
  Cell c;
  c.i = v ? 1 : 0;
  c.kind = CK::boolean;
  return c;
}
Cell make_real(double v) {
  Cell c;
  c.d = v;
  c.kind = CK::real;
  return c;
}
bool is_real(const Cell& c) {
  return c.kind == CK::real;
}
bool truthy(const Cell& c) {
  return is_real(c) ? c.d != 0.0 : c.i != 0;
}
bool exact_double(i64 v) {
  return v >= -kExact && v <= kExact;
}
double as_double(const Cell& c) {
  return is_real(c) ? c.d : static_cast<double>(c.i);
}

// A number or bool as a cell; false for any other value.
bool to_cell(const Value& v, Cell& out) {
  switch (v.kind()) {
    case Value::Kind::integer:
      out = make_int(v.as_int());
      return true;
    case Value::Kind::boolean:
      out = make_bool(v.as_bool());
      return true;
    case Value::Kind::real:
      out = make_real(v.as_double());
      return true;
    default:
      return false;
  }
}

// Python int ** non-negative int, false when it leaves int64.
bool int_pow(i64 base, i64 e, i64& out) {
  i64 r = 1;
  while (e > 0) {
    if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return false;
    e >>= 1;
    if (e > 0 && __builtin_mul_overflow(base, base, &base)) return false;
  }
  out = r;
  return true;
}

// int OP int with Python's results; false where the interpreter must decide.
[[gnu::always_inline]] inline bool int_binary(Op op, i64 a, i64 b, Cell& r) {
  i64 v = 0;
  switch (op) {
    case Op::add:
      if (__builtin_add_overflow(a, b, &v)) return false;
      break;
    case Op::sub:
      if (__builtin_sub_overflow(a, b, &v)) return false;
      break;
    case Op::mul:
      if (__builtin_mul_overflow(a, b, &v)) return false;
      break;
    case Op::floordiv:
      if (b == 0 || (a == std::numeric_limits<i64>::min() && b == -1)) return false;
      v = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --v;
      break;
    case Op::mod:
      if (b == 0) return false;
      if (b == -1) break;
      v = a % b;
      if (v != 0 && ((v < 0) != (b < 0))) v += b;
      break;
    case Op::truediv:
      if (b == 0 || !exact_double(a) || !exact_double(b)) return false;
      r = make_real(static_cast<double>(a) / static_cast<double>(b));
      return true;
    case Op::pow:
      if (b < 0 || !int_pow(a, b, v)) return false;
      break;
    case Op::rshift:
      if (b < 0) return false;
      v = b >= 64 ? (a < 0 ? -1 : 0) : a >> b;
      break;
    case Op::bitand_:
      v = a & b;
      break;
    case Op::bitor_:
      v = a | b;
      break;
    case Op::bitxor_:
      v = a ^ b;
      break;
    default:
      return false;  // lshift and the rest: rare, the interpreter's
  }
  r = make_int(v);
  return true;
}

[[gnu::always_inline]] inline bool binary(Op op, const Cell& x, const Cell& y, Cell& r) {
  if (!is_real(x) && !is_real(y)) {
    const bool bitwise = op == Op::bitand_ || op == Op::bitor_ || op == Op::bitxor_;
    if (bitwise && x.kind == CK::boolean && y.kind == CK::boolean) {
      r = make_bool((op == Op::bitand_ ? (x.i & y.i) : (op == Op::bitor_ ? (x.i | y.i) : (x.i ^ y.i))) != 0);
      return true;
    }
    return int_binary(op, x.i, y.i, r);
  }
  if ((!is_real(x) && !exact_double(x.i)) || (!is_real(y) && !exact_double(y.i))) return false;
  const double a = as_double(x), b = as_double(y);
  switch (op) {
    case Op::add:
      r = make_real(a + b);
      return true;
    case Op::sub:
      r = make_real(a - b);
      return true;
    case Op::mul:
      r = make_real(a * b);
      return true;
    case Op::truediv:
      if (b == 0.0) return false;
      r = make_real(a / b);
      return true;
    default:
      return false;  // floor division, modulo, power of floats: the interpreter's
  }
}

// x OP y for the order and equality comparisons; false where the interpreter decides.
[[gnu::always_inline]] inline bool compare(CmpOp op, const Cell& x, const Cell& y, bool& out) {
  int c = 0;  // -1, 0, 1; 2 unordered (NaN)
  if (!is_real(x) && !is_real(y)) {
    c = x.i < y.i ? -1 : (x.i > y.i ? 1 : 0);
  } else {
    if ((!is_real(x) && !exact_double(x.i)) || (!is_real(y) && !exact_double(y.i))) return false;
    const double a = as_double(x), b = as_double(y);
    c = std::isnan(a) || std::isnan(b) ? 2 : (a < b ? -1 : (a > b ? 1 : 0));
  }
  switch (op) {
    case CmpOp::eq:
      out = c == 0;
      return true;
    case CmpOp::ne:
      out = c != 0;
      return true;
    case CmpOp::lt:
      out = c == -1;
      return true;
    case CmpOp::le:
      out = c == -1 || c == 0;
      return true;
    case CmpOp::gt:
      out = c == 1;
      return true;
    case CmpOp::ge:
      out = c == 1 || c == 0;
      return true;
    default:
      return false;
  }
}

[[gnu::always_inline]] inline bool unary(Op op, const Cell& x, Cell& r) {
  if (is_real(x)) {
    if (op == Op::invert) return false;
    r = make_real(op == Op::neg ? -x.d : x.d);
    return true;
  }
  if (op == Op::neg) {
    if (x.i == std::numeric_limits<i64>::min()) return false;
    r = make_int(-x.i);
  } else {
    r = make_int(op == Op::pos ? x.i : ~x.i);
  }
  return true;
}

// A float's integral value as an int (int(), round()); false beyond int64 or for NaN.
bool float_to_int(double integral, Cell& r) {
  if (std::isnan(integral) || integral < -0x1p63 || integral >= 0x1p63) return false;
  r = make_int(static_cast<i64>(integral));
  return true;
}

// The builtins the stack program covers, on their evaluated arguments.
bool call(Builtin f, std::span<const Cell> args, Cell& r) {
  if ((f == Builtin::max || f == Builtin::min) && args.size() >= 2) {
    // Python keeps the first of equal extremes: a later one wins only when strictly better.
    const CmpOp better = f == Builtin::max ? CmpOp::gt : CmpOp::lt;
    const Cell* best = &args[0];
    for (std::size_t k = 1; k < args.size(); ++k) {
      bool b = false;
      if (!compare(better, args[k], *best, b)) return false;
      if (b) best = &args[k];
    }
    r = *best;
    return true;
  }
  if (args.size() != 1) return false;
  const Cell& x = args[0];
  switch (f) {
    case Builtin::abs:
      if (is_real(x)) {
        r = make_real(std::fabs(x.d));
        return true;
      }
      if (x.i == std::numeric_limits<i64>::min()) return false;
      r = make_int(x.i < 0 ? -x.i : x.i);
      return true;
    case Builtin::bool_:
      r = make_bool(truthy(x));
      return true;
    case Builtin::float_:
      if (!is_real(x) && !exact_double(x.i)) return false;
      r = make_real(as_double(x));
      return true;
    case Builtin::int_:
      if (!is_real(x)) {
        r = make_int(x.i);
        return true;
      }
      return float_to_int(std::trunc(x.d), r);
    case Builtin::round:
      if (!is_real(x)) {
        r = make_int(x.i);
        return true;
      }
      return float_to_int(std::nearbyint(x.d), r);
    default:
      return false;
  }
}

bool equal(const Cell& x, const Cell& y, bool& out) {
  return compare(CmpOp::eq, x, y, out);
}

}  // namespace

// ---- the compiler ------------------------------------------------------------

class CompiledExpression::Compiler {
 public:
  Compiler(const Program& p, CompiledExpression& out) : p_(p), out_(out) {}

  // False when the stack program cannot cover the expression.
  bool run() {
    reads_.assign(p_.nodes.size(), 0);
    out_.node_slot_.assign(p_.nodes.size(), -1);
    out_.node_const_.assign(p_.nodes.size(), -2);
    if (!node(p_.root)) return false;
    return max_depth_ <= kMaxStack;
  }

 private:
  void emit(Code code, std::uint8_t aux, std::uint32_t arg, int depth_change) {
    out_.code_.push_back(Ins{code, aux, arg});
    depth_ += depth_change;
    max_depth_ = std::max(max_depth_, static_cast<std::size_t>(std::max(depth_, 0)));
  }
  std::uint32_t here() const { return static_cast<std::uint32_t>(out_.code_.size()); }
  void patch(std::uint32_t at) { out_.code_[at].arg = here(); }

  // True when the subtree of node i names a slot (comprehension variables
  // that shadow a slot count too: such a subtree is never folded).
  bool reads_slot(std::uint32_t i) {
    if (reads_[i]) return reads_[i] == 2;
    const Node& n = p_.nodes[i];
    bool r = false;
    switch (n.op) {
      case Op::constant:
        break;
      case Op::name:
        r = slot_of(p_.identifiers[n.a]) >= 0;
        break;
      case Op::list:
      case Op::call:
      case Op::and_:
      case Op::or_:
      case Op::compare:
        for (std::uint32_t k = 0; k < n.count; ++k) r = reads_slot(p_.kids[n.first + k]) || r;
        break;
      case Op::comprehension:
        r = reads_slot(n.a) || reads_slot(n.b) || slot_of(p_.identifiers[n.c]) >= 0;
        for (std::uint32_t k = 0; k < n.count; ++k) r = reads_slot(p_.kids[n.first + k]) || r;
        break;
      case Op::ifelse:
        r = reads_slot(n.a) || reads_slot(n.b) || reads_slot(n.c);
        break;
      case Op::neg:
      case Op::pos:
      case Op::invert:
      case Op::not_:
        r = reads_slot(n.a);
        break;
      default:
        r = reads_slot(n.a) || reads_slot(n.b);
        break;
    }
    reads_[i] = r ? 2 : 1;
    return r;
  }

  int slot_of(const std::string& name) const {
    for (std::size_t k = 0; k < out_.slots_.size(); ++k)
      if (out_.slots_[k] == name) return static_cast<int>(k);
    return -1;
  }

  // A subtree without slots, evaluated now: a number becomes a constant, an
  // error a bail-out (the interpreter raises it if an evaluation reaches it).
  bool fold(std::uint32_t i) {
    Value v;
    out_.node_const_[i] = -1;
    try {
      v = detail::evaluate_node(p_, i, out_.constants_);
    } catch (const ExprError&) {
      out_.node_const_[i] = -3;  // fails when evaluated
      emit(k_bail, 0, 0, 1);
      return true;
    }
    Cell c;
    if (!to_cell(v, c)) return false;
    if (!is_real(c)) out_.node_const_[i] = static_cast<std::int32_t>(out_.consts_.size());
    out_.consts_.push_back(c);
    emit(k_const, 0, static_cast<std::uint32_t>(out_.consts_.size() - 1), 1);
    return true;
  }

  bool node(std::uint32_t i) {
    if (!reads_slot(i)) return fold(i);
    const Node& n = p_.nodes[i];
    switch (n.op) {
      case Op::name:
        out_.node_slot_[i] = slot_of(p_.identifiers[n.a]);
        emit(k_slot, 0, static_cast<std::uint32_t>(out_.node_slot_[i]), 1);
        return true;
      case Op::call:
        return builtin(n);
      case Op::neg:
      case Op::pos:
      case Op::invert:
        if (!node(n.a)) return false;
        emit(k_unary, static_cast<std::uint8_t>(n.op), 0, 0);
        return true;
      case Op::not_:
        if (!node(n.a)) return false;
        emit(k_not, 0, 0, 0);
        return true;
      case Op::and_:
      case Op::or_:
        return boolean(n);
      case Op::compare:
        return comparison(n);
      case Op::ifelse:
        return conditional(n);
      case Op::list:
      case Op::subscript:
      case Op::comprehension:
      case Op::constant:
        return false;
      default:
        if (!node(n.a)) return false;
        return right_operand(n.b, static_cast<std::uint8_t>(n.op), k_binary, k_binary_slot, k_binary_const);
    }
  }

  // The constant a subtree without slots folds to, nullopt when it is no
  // number or fails (then node() emits what the interpreter needs).
  std::optional<std::uint32_t> fold_constant(std::uint32_t i) {
    try {
      Cell c;
      if (!to_cell(detail::evaluate_node(p_, i, out_.constants_), c)) return std::nullopt;
      out_.consts_.push_back(c);
      const auto at = static_cast<std::uint32_t>(out_.consts_.size() - 1);
      out_.node_const_[i] = is_real(c) ? -1 : static_cast<std::int32_t>(at);
      return at;
    } catch (const ExprError&) {
      return std::nullopt;
    }
  }

  // An operator whose right operand is `right`: read from its slot or its
  // constant by the operator itself when it is one (one instruction
  // instead of two), else evaluated onto the stack first.
  bool right_operand(std::uint32_t right, std::uint8_t aux, Code generic, Code from_slot, Code from_const) {
    const Node& r = p_.nodes[right];
    if (r.op == Op::name && slot_of(p_.identifiers[r.a]) >= 0) {
      out_.node_slot_[right] = slot_of(p_.identifiers[r.a]);
      emit(from_slot, aux, static_cast<std::uint32_t>(out_.node_slot_[right]), 0);
      return true;
    }
    if (!reads_slot(right)) {
      if (const auto c = fold_constant(right)) {
        emit(from_const, aux, *c, 0);
        return true;
      }
    }
    if (!node(right)) return false;
    emit(generic, aux, 0, -1);
    return true;
  }

  bool builtin(const Node& n) {
    const auto f = static_cast<Builtin>(n.aux);
    const bool extremum = (f == Builtin::max || f == Builtin::min) && n.count >= 2;
    const bool single = (f == Builtin::abs || f == Builtin::bool_ || f == Builtin::float_ || f == Builtin::int_ ||
                         f == Builtin::round) &&
                        n.count == 1;
    if (!extremum && !single) return false;
    const std::string name(detail::builtin_name(f));
    // A slot or constant named like the builtin makes the call a TypeError: the interpreter's.
    if (slot_of(name) >= 0 || out_.constants_.find(name) != nullptr) return false;
    for (std::uint32_t k = 0; k < n.count; ++k)
      if (!node(p_.kids[n.first + k])) return false;
    emit(k_call, n.aux, n.count, 1 - static_cast<int>(n.count));
    return true;
  }

  bool boolean(const Node& n) {
    const Code jump = n.op == Op::and_ ? k_jump_false_or_pop : k_jump_true_or_pop;
    std::vector<std::uint32_t> exits;
    for (std::uint32_t k = 0; k < n.count; ++k) {
      if (!node(p_.kids[n.first + k])) return false;
      if (k + 1 == n.count) break;
      exits.push_back(here());
      emit(jump, 0, 0, -1);
    }
    for (std::uint32_t at : exits) patch(at);
    return true;
  }

  bool comparison(const Node& n) {
    std::vector<std::uint32_t> exits;
    if (!node(p_.kids[n.first])) return false;
    for (std::uint32_t k = 1; k < n.count; ++k) {
      const CmpOp op = p_.comparisons[n.c + k - 1].op;
      const std::uint32_t right = p_.kids[n.first + k];
      if (op == CmpOp::in || op == CmpOp::not_in) {
        if (k + 1 != n.count || !membership(right, op)) return false;
        break;
      }
      if (k + 1 == n.count) {
        if (!right_operand(right, static_cast<std::uint8_t>(op), k_cmp, k_cmp_slot, k_cmp_const)) return false;
      } else {
        if (!node(right)) return false;
        exits.push_back(here());
        emit(k_cmp_chain, static_cast<std::uint8_t>(op), 0, -1);
      }
    }
    for (std::uint32_t at : exits) patch(at);
    return true;
  }

  // x in LIST with a constant list of numbers; anything else is the interpreter's.
  bool membership(std::uint32_t right, CmpOp op) {
    if (reads_slot(right)) return false;
    Value v;
    try {
      v = detail::evaluate_node(p_, right, out_.constants_);
    } catch (const ExprError&) {
      emit(k_bail, 0, 0, 0);
      return true;
    }
    if (v.kind() != Value::Kind::list) return false;
    std::vector<Cell> cells;
    for (const Value& e : v.as_list()) {
      Cell c;
      if (!to_cell(e, c)) return false;
      cells.push_back(c);
    }
    out_.lists_.push_back(std::move(cells));
    emit(k_in, op == CmpOp::not_in ? 1 : 0, static_cast<std::uint32_t>(out_.lists_.size() - 1), 0);
    return true;
  }

  bool conditional(const Node& n) {
    if (!node(n.b)) return false;
    const std::uint32_t to_else = here();
    emit(k_pop_jump_false, 0, 0, -1);
    if (!node(n.a)) return false;
    const std::uint32_t to_end = here();
    emit(k_jump, 0, 0, -1);  // the else branch pushes the one result again
    patch(to_else);
    if (!node(n.c)) return false;
    patch(to_end);
    return true;
  }

  const Program& p_;
  CompiledExpression& out_;
  std::vector<std::uint8_t> reads_;  // per node: 0 unknown, 1 no slot, 2 a slot
  int depth_ = 0;
  std::size_t max_depth_ = 0;
};

// ---- the interpreter's view of the slots -------------------------------------

class CompiledExpression::SlotEnv final : public Env {
 public:
  SlotEnv(const CompiledExpression& e, std::span<const std::uint32_t> idx) : e_(e), idx_(idx) {}
  [[nodiscard]] const Value* find(std::string_view name) const override {
    for (std::size_t k = 0; k < e_.slots_.size(); ++k)
      if (e_.slots_[k] == name) return &e_.values_[k][idx_[k]];
    return e_.constants_.find(name);
  }

 private:
  const CompiledExpression& e_;
  std::span<const std::uint32_t> idx_;
};

// ---- CompiledExpression ------------------------------------------------------

CompiledExpression::CompiledExpression(const Expression& e, std::vector<std::string> slots,
                                       std::vector<std::vector<Value>> slot_values, const Env& constants)
    : expr_(e), slots_(std::move(slots)), values_(std::move(slot_values)) {
  if (slots_.size() != values_.size()) throw std::invalid_argument("CompiledExpression: one value list per slot");
  // The names read that are no slots, and the builtins' names (a binding shadows a builtin).
  std::vector<std::string> names = e.names();
  for (std::uint8_t b = 0; b <= static_cast<std::uint8_t>(Builtin::sum); ++b)
    names.emplace_back(detail::builtin_name(static_cast<Builtin>(b)));
  for (const std::string& name : names) {
    if (std::find(slots_.begin(), slots_.end(), name) != slots_.end()) continue;
    if (const Value* v = constants.find(name)) constants_.set(name, *v);
  }
  bool numeric = true;
  cells_.resize(values_.size());
  for (std::size_t k = 0; k < values_.size(); ++k) {
    cells_[k].resize(values_[k].size());
    for (std::size_t j = 0; j < values_[k].size(); ++j) numeric = to_cell(values_[k][j], cells_[k][j]) && numeric;
  }
  if (!numeric) return;
  Compiler c(*expr_.program_, *this);
  interpreted_ = !c.run();
  if (interpreted_) {
    code_.clear();
    consts_.clear();
    lists_.clear();
    return;
  }
  build_bounds();
}

Value CompiledExpression::interpret(std::span<const std::uint32_t> idx) const {
  return expr_.eval(SlotEnv(*this, idx));
}

Value CompiledExpression::eval(std::span<const std::uint32_t> idx) const {
  return interpret(idx);
}

bool CompiledExpression::test(std::span<const std::uint32_t> idx) const {
  if (!interpreted_) {
    const Outcome o = run(idx);
    if (o != Outcome::interpret) return o == Outcome::yes;
  }
  return interpret(idx).as_bool();
}

CompiledExpression::Outcome CompiledExpression::run(std::span<const std::uint32_t> idx) const {
  std::array<Cell, kMaxStack> stack;
  std::size_t top = 0;  // cells on the stack
  const std::size_t n = code_.size();
  for (std::size_t pc = 0; pc < n; ++pc) {
    const Ins& in = code_[pc];
    switch (in.code) {
      case k_const:
        stack[top++] = consts_[in.arg];
        break;
      case k_slot:
        stack[top++] = cells_[in.arg][idx[in.arg]];
        break;
      case k_unary:
        if (!unary(static_cast<Op>(in.aux), stack[top - 1], stack[top - 1])) return Outcome::interpret;
        break;
      case k_not:
        stack[top - 1] = make_bool(!truthy(stack[top - 1]));
        break;
      case k_binary:
        if (!binary(static_cast<Op>(in.aux), stack[top - 2], stack[top - 1], stack[top - 2])) return Outcome::interpret;
        --top;
        break;
      case k_binary_slot:
        if (!binary(static_cast<Op>(in.aux), stack[top - 1], cells_[in.arg][idx[in.arg]], stack[top - 1]))
          return Outcome::interpret;
        break;
      case k_binary_const:
        if (!binary(static_cast<Op>(in.aux), stack[top - 1], consts_[in.arg], stack[top - 1]))
          return Outcome::interpret;
        break;
      case k_cmp_slot:
      case k_cmp_const: {
        bool r = false;
        const Cell& y = in.code == k_cmp_slot ? cells_[in.arg][idx[in.arg]] : consts_[in.arg];
        if (!compare(static_cast<CmpOp>(in.aux), stack[top - 1], y, r)) return Outcome::interpret;
        stack[top - 1] = make_bool(r);
        break;
      }
      case k_cmp:
      case k_cmp_chain: {
        bool r = false;
        if (!compare(static_cast<CmpOp>(in.aux), stack[top - 2], stack[top - 1], r)) return Outcome::interpret;
        if (in.code == k_cmp || !r) {
          stack[top - 2] = make_bool(r);
          --top;
          if (in.code == k_cmp_chain) pc = in.arg - 1;
        } else {
          stack[top - 2] = stack[top - 1];
          --top;
        }
        break;
      }
      case k_in: {
        bool found = false;
        for (const Cell& e : lists_[in.arg]) {
          bool eq = false;
          if (!equal(stack[top - 1], e, eq)) return Outcome::interpret;
          if (eq) {
            found = true;
            break;
          }
        }
        stack[top - 1] = make_bool(found != (in.aux == 1));
        break;
      }
      case k_jump_false_or_pop:
      case k_jump_true_or_pop:
        if (truthy(stack[top - 1]) == (in.code == k_jump_true_or_pop))
          pc = in.arg - 1;
        else
          --top;
        break;
      case k_pop_jump_false:
        if (!truthy(stack[--top])) pc = in.arg - 1;
        break;
      case k_jump:
        pc = in.arg - 1;
        break;
      case k_call: {
        Cell r;
        const std::span<const Cell> args(stack.data() + top - in.arg, in.arg);
        if (!call(static_cast<Builtin>(in.aux), args, r)) return Outcome::interpret;
        top -= in.arg;
        stack[top++] = r;
        break;
      }
      default:
        return Outcome::interpret;
    }
  }
  return truthy(stack[0]) ? Outcome::yes : Outcome::no;
}

}  // namespace wstune::expr
