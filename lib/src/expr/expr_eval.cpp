// The tree-walking evaluator and the builtins. eval() returns a reference to
// the value of a node: a constant, a value in the Env, or `tmp` (a Value on
// the caller's stack), so names and constants are never copied and numbers
// never allocate.
#include <cmath>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "expr/expr_ops.hpp"
#include "expr/expr_program.hpp"

namespace wstune::expr::detail {

namespace {

using K = Value::Kind;
using E = ExprError::Kind;
using i64 = std::int64_t;
using Args = std::span<const Value* const>;  // a call's evaluated arguments

// A comprehension's loop variable over the enclosing names.
class ScopedEnv final : public Env {
 public:
  ScopedEnv(const Env& outer, std::string_view name, const Value* value) : outer_(outer), name_(name), value_(value) {}
  [[nodiscard]] const Value* find(std::string_view name) const override {
    return name == name_ ? value_ : outer_.find(name);
  }

 private:
  const Env& outer_;
  std::string_view name_;
  const Value* value_;
};

// range(start, stop, step) as Python computes its length.
struct Range {
  i64 start = 0, step = 1;
  std::uint64_t size = 0;
  // The k-th element (k < size), computed modulo 2^64 so that no
  // intermediate overflows: the element itself lies between start and stop.
  [[nodiscard]] i64 at(std::uint64_t k) const noexcept {
    return static_cast<i64>(static_cast<std::uint64_t>(start) + k * static_cast<std::uint64_t>(step));
  }
};

class Evaluator {
 public:
  explicit Evaluator(const Program& p) : p_(p) {}

  const Value& eval(std::uint32_t i, const Env& env, Value& tmp) {
    const Node& n = p_.nodes[i];
    switch (n.op) {
      case Op::constant:
        return p_.constants[n.a];
      case Op::name:
        return name(n, env);
      case Op::list:
        return list(n, env, tmp);
      case Op::subscript:
        return subscript(n, env, tmp);
      case Op::call:
        return call(n, env, tmp);
      case Op::comprehension:
        return comprehension(n, env, tmp);
      case Op::neg:
      case Op::pos:
      case Op::invert: {
        Value t;
        const Value& x = eval(n.a, env, t);
        tmp = unary_op(n.op, x, site(n));
        return tmp;
      }
      case Op::not_: {
        Value t;
        tmp = Value(!eval(n.a, env, t).as_bool());
        return tmp;
      }
      case Op::and_:
      case Op::or_: {
        // Python returns the operand that decided: the first false one for
        // and, the first true one for or, else the last.
        const bool stop_on = n.op == Op::or_;
        for (std::uint32_t k = 0;; ++k) {
          const Value& v = eval(p_.kids[n.first + k], env, tmp);
          if (k + 1 == n.count || v.as_bool() == stop_on) return v;
        }
      }
      case Op::compare:
        return compare(n, env, tmp);
      case Op::ifelse: {
        Value t;
        return eval(n.b, env, t).as_bool() ? eval(n.a, env, tmp) : eval(n.c, env, tmp);
      }
      default: {
        Value ta, tb;
        const Value& x = eval(n.a, env, ta);
        const Value& y = eval(n.b, env, tb);
        tmp = binary_op(n.op, x, y, site(n), budget_);
        return tmp;
      }
    }
  }

 private:
  Site site(const Node& n) const { return Site{p_.text, n.offset}; }

  const Value& name(const Node& n, const Env& env) const {
    const std::string& id = p_.identifiers[n.a];
    if (const Value* v = env.find(id)) return *v;
    for (std::uint8_t b = 0; b <= static_cast<std::uint8_t>(Builtin::sum); ++b) {
      if (builtin_name(static_cast<Builtin>(b)) == id) {
        fail(E::unsupported, fmt::format("builtin function '{}' used as a value", id),
             "builtins can only be called here", site(n));
      }
    }
    fail(E::name, fmt::format("name '{}'", id), fmt::format("name '{}' is not defined", id), site(n));
  }

  const Value& list(const Node& n, const Env& env, Value& tmp) {
    budget_.charge(n.count + 1, site(n));
    std::vector<Value> out;
    out.reserve(n.count);
    for (std::uint32_t k = 0; k < n.count; ++k) {
      Value t;
      const Value& v = eval(p_.kids[n.first + k], env, t);
      if (&v == &t) {
        out.push_back(std::move(t));
      } else {
        budget_.charge_copy(v, site(n));
        out.push_back(v);
      }
    }
    tmp = Value(std::move(out));
    return tmp;
  }

  // The index of a list or str of `size` elements, negative counting from the end.
  std::size_t index(const Value& target, const Value& idx, std::size_t size, const Node& n) const {
    if (!is_intlike(idx)) {
      fail(E::type, fmt::format("{} index of type {}", target.type_name(), idx.type_name()),
           fmt::format("{} indices must be integers, not {}", target.type_name(), idx.type_name()), site(n));
    }
    i64 k = idx.as_int();
    if (k < 0) k += static_cast<i64>(size);
    if (k < 0 || static_cast<std::uint64_t>(k) >= size) {
      fail(E::index, fmt::format("index {} out of range", idx.as_int()),
           fmt::format("{} index out of range (length {})", target.type_name(), size), site(n));
    }
    return static_cast<std::size_t>(k);
  }

  const Value& subscript(const Node& n, const Env& env, Value& tmp) {
    Value tt, ti;
    const Value& target = eval(n.a, env, tt);
    const Value& idx = eval(n.b, env, ti);
    if (target.kind() == K::list) {
      const Value& e = target.as_list()[index(target, idx, target.as_list().size(), n)];
      if (&target != &tt) return e;  // an element of a constant or an Env value: no copy
      tmp = e;
      return tmp;
    }
    if (target.kind() == K::string) {
      const std::string& s = target.as_string();
      const std::size_t k = index(target, idx, char_count(s), n);
      std::size_t at = 0;
      for (std::size_t c = 0; c < k; ++c) at += char_step(s, at);
      tmp = Value(s.substr(at, char_step(s, at)));
      return tmp;
    }
    fail(E::type, fmt::format("subscript of {}", target.type_name()),
         fmt::format("'{}' object is not subscriptable", target.type_name()), site(n));
  }

  const Value& compare(const Node& n, const Env& env, Value& tmp) {
    // a < b < c is a < b and b < c with b evaluated once; two slots alternate
    // between the left and the right operand.
    Value slots[2];
    const Value* left = &eval(p_.kids[n.first], env, slots[0]);
    for (std::uint32_t k = 1; k < n.count; ++k) {
      const Value& right = eval(p_.kids[n.first + k], env, slots[k & 1]);
      const Comparison& c = p_.comparisons[n.c + k - 1];
      if (!compare_op(c.op, *left, right, Site{p_.text, c.offset}, budget_)) {
        tmp = Value(false);
        return tmp;
      }
      left = &right;
    }
    tmp = Value(true);
    return tmp;
  }

  // ---- builtins --------------------------------------------------------

  [[noreturn]] void arity(Builtin f, std::size_t given, std::string_view expected, const Node& n) const {
    fail(E::type, fmt::format("{}() with {} argument{}", builtin_name(f), given, given == 1 ? "" : "s"),
         fmt::format("{}() takes {}", builtin_name(f), expected), site(n));
  }

  [[noreturn]] void not_iterable(const Value& v, const Node& n) const {
    fail(E::type, fmt::format("iteration over {}", v.type_name()),
         fmt::format("'{}' object is not iterable", v.type_name()), site(n));
  }

  // Calls `each` with every element of a list or every character of a str.
  template <class F>
  void for_each(const Value& iterable, const Node& n, F&& each) {
    if (iterable.kind() == K::list) {
      for (const Value& e : iterable.as_list()) each(e);
    } else if (iterable.kind() == K::string) {
      const std::string& s = iterable.as_string();
      for (std::size_t at = 0; at < s.size();) {
        const std::size_t len = char_step(s, at);
        each(Value(s.substr(at, len)));
        at += len;
      }
    } else {
      not_iterable(iterable, n);
    }
  }

  Range range_of(Args args, const Node& n) const {
    if (args.empty() || args.size() > 3) arity(Builtin::range, args.size(), "1 to 3 arguments", n);
    for (const Value* a : args) {
      if (!is_intlike(*a)) {
        fail(E::type, fmt::format("range() of {}", a->type_name()),
             fmt::format("'{}' object cannot be interpreted as an integer", a->type_name()), site(n));
      }
    }
    Range r;
    i64 stop = args[0]->as_int();
    if (args.size() >= 2) {
      r.start = args[0]->as_int();
      stop = args[1]->as_int();
    }
    if (args.size() == 3) r.step = args[2]->as_int();
    if (r.step == 0) fail(E::value, "range() step 0", "range() arg 3 must not be zero", site(n));
    // The length as Python's range computes it, in unsigned 64-bit arithmetic
    // (the distance between two int64 values always fits).
    std::uint64_t size = 0;
    if (r.step > 0 && r.start < stop) {
      size = (static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(r.start) - 1) /
                 static_cast<std::uint64_t>(r.step) +
             1;
    } else if (r.step < 0 && r.start > stop) {
      size = (static_cast<std::uint64_t>(r.start) - static_cast<std::uint64_t>(stop) - 1) /
                 (std::uint64_t{0} - static_cast<std::uint64_t>(r.step)) +
             1;
    }
    if (size > max_work) {
      fail(E::limit, "range() length", fmt::format("{} elements; a range has at most {}", size, max_work), site(n));
    }
    r.size = size;
    return r;
  }

  const Value& min_max(Builtin f, Args args, const Node& n, Value& tmp) {
    if (args.empty()) arity(f, 0, "at least 1 argument", n);
    const CmpOp better = f == Builtin::max ? CmpOp::gt : CmpOp::lt;
    const Site s = site(n);
    if (args.size() == 1) {
      // One argument: its elements. Python keeps the first of equal extremes.
      bool any = false;
      for_each(*args[0], n, [&](const Value& v) {
        budget_.charge(1, s);
        if (!any || compare_op(better, v, tmp, s, budget_)) tmp = v;
        any = true;
      });
      if (!any) {
        fail(E::value, fmt::format("{}() of an empty sequence", builtin_name(f)),
             fmt::format("{}() arg is an empty sequence", builtin_name(f)), s);
      }
      return tmp;
    }
    const Value* best = args[0];
    for (std::size_t k = 1; k < args.size(); ++k) {
      if (compare_op(better, *args[k], *best, s, budget_)) best = args[k];
    }
    tmp = *best;
    return tmp;
  }

  const Value& call(const Node& n, const Env& env, Value& tmp) {
    const auto f = static_cast<Builtin>(n.aux);
    // Python evaluates every argument before the call checks anything.
    constexpr std::size_t inline_args = 4;
    Value local[inline_args];
    const Value* local_ptrs[inline_args];
    std::vector<Value> heap;
    std::vector<const Value*> heap_ptrs;
    std::span<const Value* const> args;
    if (n.count <= inline_args) {
      for (std::uint32_t k = 0; k < n.count; ++k) local_ptrs[k] = &eval(p_.kids[n.first + k], env, local[k]);
      args = std::span<const Value* const>(local_ptrs, n.count);
    } else {
      heap.resize(n.count);
      heap_ptrs.resize(n.count);
      for (std::uint32_t k = 0; k < n.count; ++k) heap_ptrs[k] = &eval(p_.kids[n.first + k], env, heap[k]);
      args = heap_ptrs;
    }
    if (const Value* shadow = env.find(builtin_name(f))) {
      fail(E::type, fmt::format("call of '{}', a {} here", builtin_name(f), shadow->type_name()),
           fmt::format("'{}' object is not callable", shadow->type_name()), site(n));
    }
    return builtin(f, args, n, tmp);
  }

  // Calls builtin f with its evaluated arguments; the result is in tmp.
  const Value& builtin(Builtin f, Args args, const Node& n, Value& tmp) {
    switch (f) {
      case Builtin::abs:
        return call_abs(args, n, tmp);
      case Builtin::bool_:
        return call_bool(args, n, tmp);
      case Builtin::float_:
        return call_float(args, n, tmp);
      case Builtin::int_:
        return call_int(args, n, tmp);
      case Builtin::round:
        return call_round(args, n, tmp);
      case Builtin::str:
        return call_str(args, n, tmp);
      case Builtin::len:
        return call_len(args, n, tmp);
      case Builtin::list:
        return call_list(args, n, tmp);
      case Builtin::max:
      case Builtin::min:
        return min_max(f, args, n, tmp);
      case Builtin::range:
        return call_range(args, n, tmp);
      case Builtin::sum:
        return call_sum(args, n, tmp);
    }
    return tmp;
  }

  // The one argument of f(), else a TypeError saying what f() takes.
  const Value& only_arg(Builtin f, Args args, std::string_view expected, const Node& n) const {
    if (args.size() != 1) arity(f, args.size(), expected, n);
    return *args[0];
  }

  // abs(x): a float's magnitude, or an int's (-x through the checked negation).
  const Value& call_abs(Args args, const Node& n, Value& tmp) const {
    const Value& x = only_arg(Builtin::abs, args, "exactly one argument", n);
    const Site s = site(n);
    if (x.kind() == K::real)
      tmp = Value(std::fabs(x.as_double()));
    else if (is_intlike(x) && x.as_int() < 0)
      tmp = unary_op(Op::neg, x, s);
    else if (is_intlike(x))
      tmp = Value(x.as_int());
    else
      fail(E::type, fmt::format("abs() of {}", x.type_name()),
           fmt::format("bad operand type for abs(): '{}'", x.type_name()), s);
    return tmp;
  }

  // bool() or bool(x): False, or x's truth.
  const Value& call_bool(Args args, const Node& n, Value& tmp) const {
    if (args.size() > 1) arity(Builtin::bool_, args.size(), "at most 1 argument", n);
    tmp = Value(args.size() == 1 && args[0]->as_bool());
    return tmp;
  }

  // float() or float(x) of a number; float(str) is outside the subset.
  const Value& call_float(Args args, const Node& n, Value& tmp) const {
    if (args.size() > 1) arity(Builtin::float_, args.size(), "at most 1 argument", n);
    if (args.empty()) return tmp = Value(0.0);
    const Value& x = *args[0];
    if (x.is_number()) return tmp = Value(x.as_double());
    const Site s = site(n);
    if (x.kind() == K::string) {
      fail(E::unsupported, "float() of a str", "parsing numbers from strings is outside the subset", s);
    }
    fail(E::type, fmt::format("float() of {}", x.type_name()),
         fmt::format("float() argument must be a string or a real number, not '{}'", x.type_name()), s);
  }

  // int() or int(x): 0, an int's (or a bool's) value, a float truncated toward zero; int(str) is outside the subset.
  const Value& call_int(Args args, const Node& n, Value& tmp) const {
    if (args.empty()) return tmp = Value(i64{0});
    const Value& x = *args[0];
    const Site s = site(n);
    if (x.kind() == K::string) {
      fail(E::unsupported, "int() of a str", "parsing numbers from strings is outside the subset", s);
    }
    if (args.size() > 1) arity(Builtin::int_, args.size(), "one number argument", n);
    if (is_intlike(x)) return tmp = Value(x.as_int());
    if (x.kind() != K::real) {
      fail(
          E::type, fmt::format("int() of {}", x.type_name()),
          fmt::format("int() argument must be a string, a bytes-like object or a real number, not '{}'", x.type_name()),
          s);
    }
    return tmp = Value(float_to_int(std::trunc(x.as_double()), "int()", s));
  }

  // round(x) to an int; round(x, ndigits) is outside the subset.
  const Value& call_round(Args args, const Node& n, Value& tmp) const {
    const Site s = site(n);
    if (args.size() == 2) fail(E::unsupported, "round() with ndigits", "round(x) to an int only", s);
    const Value& x = only_arg(Builtin::round, args, "one argument here", n);
    if (is_intlike(x)) return tmp = Value(x.as_int());
    if (x.kind() != K::real) {
      fail(E::type, fmt::format("round() of {}", x.type_name()),
           fmt::format("type {} doesn't define __round__ method", x.type_name()), s);
    }
    // Round half to even, as Python's float.__round__ (the default FP rounding mode).
    return tmp = Value(float_to_int(std::nearbyint(x.as_double()), "round()", s));
  }

  // str() or str(x), its bytes charged to the budget.
  const Value& call_str(Args args, const Node& n, Value& tmp) {
    if (args.size() > 1) arity(Builtin::str, args.size(), "at most 1 argument", n);
    tmp = Value(args.empty() ? std::string() : args[0]->str());
    budget_.charge(tmp.as_string().size() + 1, site(n));
    return tmp;
  }

  // len(x): a list's elements or a str's characters.
  const Value& call_len(Args args, const Node& n, Value& tmp) const {
    const Value& x = only_arg(Builtin::len, args, "exactly one argument", n);
    if (x.kind() == K::list) return tmp = Value(static_cast<i64>(x.as_list().size()));
    if (x.kind() == K::string) return tmp = Value(static_cast<i64>(char_count(x.as_string())));
    fail(E::type, fmt::format("len() of {}", x.type_name()),
         fmt::format("object of type '{}' has no len()", x.type_name()), site(n));
  }

  // list() or list(iterable): a copy of its elements (a str's characters), each charged to the budget.
  const Value& call_list(Args args, const Node& n, Value& tmp) {
    if (args.size() > 1) arity(Builtin::list, args.size(), "at most 1 argument", n);
    const Site s = site(n);
    std::vector<Value> out;
    if (args.size() == 1) {
      for_each(*args[0], n, [&](const Value& v) {
        budget_.charge_copy(v, s);
        out.push_back(v);
      });
    }
    return tmp = Value(std::move(out));
  }

  // range(...) as the list of its ints (the subset's range() returns a list).
  const Value& call_range(Args args, const Node& n, Value& tmp) {
    const Range r = range_of(args, n);
    budget_.charge(r.size + 1, site(n));
    std::vector<Value> out;
    out.reserve(r.size);
    for (std::uint64_t k = 0; k < r.size; ++k) out.emplace_back(r.at(k));
    return tmp = Value(std::move(out));
  }

  // sum(iterable[, start]): start (0 by default, never a str) + each element, left to right.
  const Value& call_sum(Args args, const Node& n, Value& tmp) {
    if (args.empty() || args.size() > 2) arity(Builtin::sum, args.size(), "1 or 2 arguments", n);
    if (args[0]->kind() != K::list && args[0]->kind() != K::string) not_iterable(*args[0], n);
    const Site s = site(n);
    Value acc = args.size() == 2 ? *args[1] : Value(i64{0});
    if (acc.kind() == K::string) {
      fail(E::type, "sum() of strs", "sum() can't sum strings [use ''.join(seq) instead]", s);
    }
    for_each(*args[0], n, [&](const Value& v) {
      budget_.charge(1, s);
      acc = binary_op(Op::add, acc, v, s, budget_);
    });
    return tmp = std::move(acc);
  }

  i64 float_to_int(double integral, std::string_view what, Site s) const {
    if (std::isnan(integral)) {
      fail(E::value, fmt::format("{} of nan", what), "cannot convert float NaN to integer", s);
    }
    if (std::isinf(integral)) {
      fail(E::overflow, fmt::format("{} of inf", what), "cannot convert float infinity to integer", s);
    }
    if (integral < -0x1p63 || integral >= 0x1p63) {
      fail(E::int_overflow, fmt::format("{} beyond int64", what), "Python would make a big int", s);
    }
    return static_cast<i64>(integral);
  }

  // ---- comprehension ---------------------------------------------------

  const Value& comprehension(const Node& n, const Env& env, Value& tmp) {
    const std::string& var = p_.identifiers[n.c];
    const Site s = site(n);
    std::vector<Value> out;
    const auto step = [&](const Value& item) {
      budget_.charge(1, s);
      const ScopedEnv inner(env, var, &item);
      for (std::uint32_t k = 0; k < n.count; ++k) {
        Value t;
        if (!eval(p_.kids[n.first + k], inner, t).as_bool()) return;
      }
      Value t;
      const Value& v = eval(n.a, inner, t);
      if (&v == &t) {
        out.push_back(std::move(t));
      } else {
        budget_.charge_copy(v, s);
        out.push_back(v);
      }
    };
    const Node& it = p_.nodes[n.b];
    if (it.op == Op::call && static_cast<Builtin>(it.aux) == Builtin::range && it.count <= 3) {
      // for v in range(...): step through the range without building it.
      Value local[3];
      const Value* ptrs[3];
      for (std::uint32_t k = 0; k < it.count; ++k) ptrs[k] = &eval(p_.kids[it.first + k], env, local[k]);
      if (const Value* shadow = env.find("range")) {
        fail(E::type, fmt::format("call of 'range', a {} here", shadow->type_name()),
             fmt::format("'{}' object is not callable", shadow->type_name()), site(it));
      }
      const Range r = range_of(std::span<const Value* const>(ptrs, it.count), it);
      for (std::uint64_t k = 0; k < r.size; ++k) step(Value(r.at(k)));
    } else {
      Value t;
      const Value& iterable = eval(n.b, env, t);
      for_each(iterable, it, step);
    }
    return tmp = Value(std::move(out));
  }

  const Program& p_;
  Budget budget_;
};

}  // namespace

Value evaluate(const Program& p, const Env& env) {
  return evaluate_node(p, p.root, env);
}

Value evaluate_node(const Program& p, std::uint32_t node, const Env& env) {
  Evaluator ev(p);
  Value tmp;
  const Value& r = ev.eval(node, env, tmp);
  if (&r == &tmp) return tmp;
  return r;
}

}  // namespace wstune::expr::detail
