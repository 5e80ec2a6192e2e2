// Python 3 semantics of the operators on Values (see expr_ops.hpp).
#include "expr/expr_ops.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace wstune::expr::detail {

namespace {

using K = Value::Kind;
using E = ExprError::Kind;
using i64 = std::int64_t;
using u64 = std::uint64_t;
constexpr i64 i64_min = std::numeric_limits<i64>::min();

[[noreturn]] void int_overflow(Op op, Site site) {
  fail(E::int_overflow, fmt::format("'{}' on ints", op_text(op)),
       "the result does not fit in 64 bits; Python would make a big int", site);
}

[[noreturn]] void zero_division(Op op, std::string_view python_message, Site site) {
  fail(E::zero_division, fmt::format("'{}' by zero", op_text(op)), python_message, site);
}

[[noreturn]] void operand_types(Op op, const Value& x, const Value& y, Site site) {
  fail(E::type, fmt::format("'{}' on {} and {}", op_text(op), x.type_name(), y.type_name()),
       fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op_text(op), x.type_name(), y.type_name()),
       site);
}

bool is_bitwise(Op op) noexcept {
  return op == Op::bitand_ || op == Op::bitor_ || op == Op::bitxor_ || op == Op::lshift || op == Op::rshift;
}

u64 magnitude(i64 v) noexcept {
  return v < 0 ? u64{0} - static_cast<u64>(v) : static_cast<u64>(v);
}

// int / int, correctly rounded as CPython's long_true_divide.
double int_true_divide(i64 a, i64 b) noexcept {
  const bool negative = (a < 0) != (b < 0);
  const u64 n = magnitude(a), d = magnitude(b);
  if (n == 0) return negative ? -0.0 : 0.0;
  constexpr u64 exact = u64{1} << 53;
  if (n <= exact && d <= exact) return static_cast<double>(a) / static_cast<double>(b);
  // Scale so the integer quotient has 56 or 57 bits, fold the remainder into
  // a sticky bit and let the one conversion to double round (to nearest even).
  const int e = std::bit_width(n) - std::bit_width(d);
  const int shift = 56 - e;
  __extension__ using u128 = unsigned __int128;  // GCC and Clang; -Wpedantic wants the __extension__
  u128 num = n, den = d;
  if (shift >= 0)
    num <<= shift;
  else
    den <<= -shift;
  const auto q = static_cast<u64>(num / den) | (num % den != 0 ? 1u : 0u);
  const double r = std::ldexp(static_cast<double>(q), -shift);
  return negative ? -r : r;
}

i64 int_pow(i64 base, i64 e, Site site) {
  if (e == 0 || base == 1) return 1;
  if (base == 0) return 0;
  if (base == -1) return (e & 1) ? -1 : 1;
  i64 result = 1;
  while (true) {
    if ((e & 1) && __builtin_mul_overflow(result, base, &result)) int_overflow(Op::pow, site);
    e >>= 1;
    if (e == 0) return result;
    // A square that overflows would be a factor of the result, which then overflows too.
    if (__builtin_mul_overflow(base, base, &base)) int_overflow(Op::pow, site);
  }
}

Value int_op(Op op, i64 a, i64 b, Site site) {
  i64 r = 0;
  switch (op) {
    case Op::add:
      if (__builtin_add_overflow(a, b, &r)) int_overflow(op, site);
      return r;
    case Op::sub:
      if (__builtin_sub_overflow(a, b, &r)) int_overflow(op, site);
      return r;
    case Op::mul:
      if (__builtin_mul_overflow(a, b, &r)) int_overflow(op, site);
      return r;
    case Op::truediv:
      if (b == 0) zero_division(op, "division by zero", site);
      return int_true_divide(a, b);
    case Op::floordiv:
      if (b == 0) zero_division(op, "integer division or modulo by zero", site);
      if (a == i64_min && b == -1) int_overflow(op, site);
      r = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --r;
      return r;
    case Op::mod:
      if (b == 0) zero_division(op, "integer division or modulo by zero", site);
      if (b == -1) return i64{0};
      r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    case Op::pow:
      if (b < 0) return float_pow(static_cast<double>(a), static_cast<double>(b), site);
      return int_pow(a, b, site);
    case Op::lshift: {
      if (b < 0) fail(E::value, "'<<' by a negative count", "negative shift count", site);
      if (a == 0) return i64{0};
      if (b >= 64) int_overflow(op, site);
      if (a < (i64_min >> b) || a > (std::numeric_limits<i64>::max() >> b)) int_overflow(op, site);
      return static_cast<i64>(static_cast<u64>(a) << b);
    }
    case Op::rshift:
      if (b < 0) fail(E::value, "'>>' by a negative count", "negative shift count", site);
      if (b >= 64) return i64{a < 0 ? -1 : 0};
      return a >> b;
    case Op::bitand_:
      return a & b;
    case Op::bitor_:
      return a | b;
    case Op::bitxor_:
      return a ^ b;
    default:
      break;
  }
  return r;
}

// CPython's _float_div_mod: the floor quotient snapped to an integral value
// and the remainder with the sign of the divisor.
void float_div_mod(double x, double y, double& div, double& mod) noexcept {
  mod = std::fmod(x, y);
  div = (x - mod) / y;
  if (mod != 0.0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  if (div != 0.0) {
    const double floor_div = std::floor(div);
    div = (div - floor_div > 0.5) ? floor_div + 1.0 : floor_div;
  } else {
    div = std::copysign(0.0, x / y);
  }
}

Value float_op(Op op, double x, double y, Site site) {
  double div = 0, mod = 0;
  switch (op) {
    case Op::add:
      return x + y;
    case Op::sub:
      return x - y;
    case Op::mul:
      return x * y;
    case Op::truediv:
      if (y == 0.0) zero_division(op, "float division by zero", site);
      return x / y;
    case Op::floordiv:
      if (y == 0.0) zero_division(op, "float floor division by zero", site);
      float_div_mod(x, y, div, mod);
      return div;
    case Op::mod:
      if (y == 0.0) zero_division(op, "float modulo", site);
      float_div_mod(x, y, div, mod);
      return mod;
    case Op::pow:
      return float_pow(x, y, site);
    default:
      return 0.0;
  }
}

// str + str, list + list, str * int, list * int (either order); str % is
// Python's printf-style formatting, outside the subset.
Value sequence_op(Op op, const Value& x, const Value& y, Site site, Budget& budget) {
  const K kx = x.kind(), ky = y.kind();
  if (op == Op::add && kx == ky && kx == K::string) {
    budget.charge(x.as_string().size() + y.as_string().size(), site);
    return x.as_string() + y.as_string();
  }
  if (op == Op::add && kx == ky && kx == K::list) {
    budget.charge_copy(x, site);
    budget.charge_copy(y, site);
    std::vector<Value> out;
    out.reserve(x.as_list().size() + y.as_list().size());
    out.insert(out.end(), x.as_list().begin(), x.as_list().end());
    out.insert(out.end(), y.as_list().begin(), y.as_list().end());
    return out;
  }
  if (op == Op::mul && ((is_intlike(y) && (kx == K::string || kx == K::list)) ||
                        (is_intlike(x) && (ky == K::string || ky == K::list)))) {
    const Value& seq = is_intlike(y) ? x : y;
    const i64 times = is_intlike(y) ? y.as_int() : x.as_int();
    const bool empty = seq.kind() == K::string ? seq.as_string().empty() : seq.as_list().empty();
    if (times <= 0 || empty) return seq.kind() == K::string ? Value(std::string()) : Value(std::vector<Value>());
    if (seq.kind() == K::string) {
      const std::string& s = seq.as_string();
      if (static_cast<u64>(times) > max_work / s.size()) budget.charge(max_work + 1, site);
      budget.charge(s.size() * static_cast<u64>(times), site);
      std::string out;
      out.reserve(s.size() * static_cast<std::size_t>(times));
      for (i64 k = 0; k < times; ++k) out += s;
      return out;
    }
    const auto& l = seq.as_list();
    if (static_cast<u64>(times) > max_work / l.size()) budget.charge(max_work + 1, site);
    for (i64 k = 0; k < times; ++k) budget.charge_copy(seq, site);
    std::vector<Value> out;
    out.reserve(l.size() * static_cast<std::size_t>(times));
    for (i64 k = 0; k < times; ++k) out.insert(out.end(), l.begin(), l.end());
    return out;
  }
  if (op == Op::mod && kx == K::string) {
    fail(E::unsupported, "'%' string formatting", "printf-style formatting is outside the subset", site);
  }
  operand_types(op, x, y, site);
}

// -1, 0, 1, or 2 when unordered (a NaN); exact across int and float.
int number_cmp(const Value& x, const Value& y) noexcept {
  const auto sign = [](auto a, auto b) { return a < b ? -1 : (a > b ? 1 : 0); };
  const bool xi = is_intlike(x), yi = is_intlike(y);
  if (xi && yi) return sign(x.as_int(), y.as_int());
  if (!xi && !yi) {
    const double a = x.as_double(), b = y.as_double();
    if (std::isnan(a) || std::isnan(b)) return 2;
    return sign(a, b);
  }
  // One int, one float: compare exactly, never by rounding the int.
  const i64 i = xi ? x.as_int() : y.as_int();
  const double d = xi ? y.as_double() : x.as_double();
  int c = 0;  // sign of (i - d)
  if (std::isnan(d)) return 2;
  if (d >= 0x1p63)
    c = -1;
  else if (d < -0x1p63)
    c = 1;
  else {
    const double fl = std::floor(d);
    const auto fi = static_cast<i64>(fl);
    c = i < fi ? -1 : (i > fi ? 1 : (d > fl ? -1 : 0));
  }
  return xi ? c : -c;
}

bool apply(CmpOp op, int c) noexcept {
  if (c == 2) return op == CmpOp::ne;
  switch (op) {
    case CmpOp::eq:
      return c == 0;
    case CmpOp::ne:
      return c != 0;
    case CmpOp::lt:
      return c < 0;
    case CmpOp::le:
      return c <= 0;
    case CmpOp::gt:
      return c > 0;
    case CmpOp::ge:
      return c >= 0;
    default:
      return false;
  }
}

bool order(CmpOp op, const Value& x, const Value& y, Site site, Budget& budget) {
  if (x.is_number() && y.is_number()) return apply(op, number_cmp(x, y));
  const K kx = x.kind(), ky = y.kind();
  if (kx == K::string && ky == K::string) {
    budget.charge(std::min(x.as_string().size(), y.as_string().size()) + 1, site);
    const int c = x.as_string().compare(y.as_string());
    return apply(op, c < 0 ? -1 : (c > 0 ? 1 : 0));
  }
  if (kx == K::list && ky == K::list) {
    // Python's list_richcompare: the first pair that differs decides, else the lengths.
    const auto& a = x.as_list();
    const auto& b = y.as_list();
    for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
      budget.charge(1, site);
      if (!values_equal(a[k], b[k], &budget, site)) return compare_op(op, a[k], b[k], site, budget);
    }
    return apply(op, a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0));
  }
  fail(E::type, fmt::format("'{}' between {} and {}", cmp_text(op), x.type_name(), y.type_name()),
       fmt::format("'{}' not supported between instances of '{}' and '{}'", cmp_text(op), x.type_name(), y.type_name()),
       site);
}

bool contains(const Value& container, const Value& item, Site site, Budget& budget) {
  if (container.kind() == K::list) {
    for (const Value& e : container.as_list()) {
      budget.charge(1, site);
      if (values_equal(e, item, &budget, site)) return true;
    }
    return false;
  }
  if (container.kind() == K::string) {
    if (item.kind() != K::string) {
      fail(E::type, fmt::format("'in' of {} in str", item.type_name()),
           fmt::format("'in <string>' requires string as left operand, not {}", item.type_name()), site);
    }
    budget.charge(container.as_string().size() + 1, site);
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  fail(E::type, fmt::format("'in' of {}", container.type_name()),
       fmt::format("argument of type '{}' is not iterable", container.type_name()), site);
}

}  // namespace

void Budget::exceeded(Site site) {
  fail(E::limit, "evaluation work", fmt::format("more than {} elements built or visited", max_work), site);
}

void Budget::charge_copy(const Value& v, Site site) {
  switch (v.kind()) {
    case K::string:
      charge(v.as_string().size() + 1, site);
      return;
    case K::list:
      charge(1, site);
      for (const Value& e : v.as_list()) charge_copy(e, site);
      return;
    default:
      charge(1, site);
      return;
  }
}

double float_pow(double x, double y, Site site) {
  // CPython float_pow: the special cases first, then the C library's pow.
  const auto odd_integer = [](double v) { return std::fmod(std::fabs(v), 2.0) == 1.0; };
  if (y == 0.0) return 1.0;
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return x == 1.0 ? 1.0 : y;
  if (std::isinf(y)) {
    const double ax = std::fabs(x);
    if (ax == 1.0) return 1.0;
    return ((y > 0.0) == (ax > 1.0)) ? std::fabs(y) : 0.0;
  }
  if (std::isinf(x)) {
    const bool odd = odd_integer(y);
    if (y > 0.0) return odd ? x : std::fabs(x);
    return odd ? std::copysign(0.0, x) : 0.0;
  }
  if (x == 0.0) {
    if (y < 0.0) {
      fail(E::zero_division, "'**' by zero", "0.0 cannot be raised to a negative power", site);
    }
    return odd_integer(y) ? x : 0.0;
  }
  bool negate = false;
  if (x < 0.0) {
    if (y != std::floor(y)) {
      fail(E::unsupported, "'**' with a complex result", "a negative number to a fractional power is complex in Python",
           site);
    }
    x = -x;
    negate = odd_integer(y);
  }
  if (x == 1.0) return negate ? -1.0 : 1.0;
  double r = std::pow(x, y);
  if (std::isinf(r)) fail(E::overflow, "'**' on floats", "(34, 'Numerical result out of range')", site);
  return negate ? -r : r;
}

Value unary_op(Op op, const Value& x, Site site) {
  if (is_intlike(x)) {
    const i64 v = x.as_int();
    if (op == Op::neg) {
      if (v == i64_min) int_overflow(op, site);
      return -v;
    }
    return op == Op::pos ? v : ~v;
  }
  if (x.kind() == K::real && op != Op::invert) return op == Op::neg ? -x.as_double() : x.as_double();
  fail(E::type, fmt::format("unary '{}' on {}", op_text(op), x.type_name()),
       fmt::format("bad operand type for unary {}: '{}'", op_text(op), x.type_name()), site);
}

Value binary_op(Op op, const Value& x, const Value& y, Site site, Budget& budget) {
  const K kx = x.kind(), ky = y.kind();
  if (is_intlike(x) && is_intlike(y)) {
    if (kx == K::boolean && ky == K::boolean && (op == Op::bitand_ || op == Op::bitor_ || op == Op::bitxor_)) {
      const bool a = x.as_bool(), b = y.as_bool();
      return op == Op::bitand_ ? (a && b) : (op == Op::bitor_ ? (a || b) : (a != b));
    }
    return int_op(op, x.as_int(), y.as_int(), site);
  }
  if (x.is_number() && y.is_number()) {
    if (is_bitwise(op)) operand_types(op, x, y, site);
    return float_op(op, x.as_double(), y.as_double(), site);
  }
  return sequence_op(op, x, y, site, budget);
}

bool values_equal(const Value& x, const Value& y, Budget* budget, Site site) {
  if (x.is_number() && y.is_number()) return number_cmp(x, y) == 0;
  if (x.kind() != y.kind()) return false;
  if (x.kind() == K::string) {
    if (budget != nullptr) budget->charge(std::min(x.as_string().size(), y.as_string().size()) + 1, site);
    return x.as_string() == y.as_string();
  }
  const auto& a = x.as_list();
  const auto& b = y.as_list();
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (budget != nullptr) budget->charge(1, site);
    if (!values_equal(a[k], b[k], budget, site)) return false;
  }
  return true;
}

bool compare_op(CmpOp op, const Value& x, const Value& y, Site site, Budget& budget) {
  switch (op) {
    case CmpOp::eq:
      return values_equal(x, y, &budget, site);
    case CmpOp::ne:
      return !values_equal(x, y, &budget, site);
    case CmpOp::in:
      return contains(y, x, site, budget);
    case CmpOp::not_in:
      return !contains(y, x, site, budget);
    default:
      return order(op, x, y, site, budget);
  }
}

}  // namespace wstune::expr::detail
