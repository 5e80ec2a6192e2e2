#pragma once
// Internal: Python 3 semantics of the expression language's operators on
// Values (numeric tower, floor division, float pow, comparisons, sequences),
// and the work budget of one evaluation. Sources: Python 3 language reference
// §6.6-§6.10; CPython 3.11 Objects/floatobject.c and longobject.c for the
// corner cases (float_pow, _float_div_mod, long_true_divide).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "expr/expr_program.hpp"
#include "expr/expression.hpp"

namespace wstune::expr::detail {

// The work one evaluation may still do (see max_work).
class Budget {
 public:
  void charge(std::uint64_t n, Site site) {
    if (n > left_) exceeded(site);
    left_ -= n;
  }
  // Charges what copying `v` costs: 1 for a number, the length of a str, the
  // elements of a list (recursively) plus one.
  void charge_copy(const Value& v, Site site);

 private:
  [[noreturn]] static void exceeded(Site site);
  std::uint64_t left_ = max_work;
};

// True for int and bool.
inline bool is_intlike(const Value& v) noexcept {
  return v.kind() == Value::Kind::integer || v.kind() == Value::Kind::boolean;
}

Value unary_op(Op op, const Value& x, Site site);
Value binary_op(Op op, const Value& x, const Value& y, Site site, Budget& budget);
bool compare_op(CmpOp op, const Value& x, const Value& y, Site site, Budget& budget);
// Python ==; charges the elements and characters it looks at when budget is given.
bool values_equal(const Value& x, const Value& y, Budget* budget, Site site = {});

// Python float_pow (also int ** negative int, which Python computes in floats).
double float_pow(double x, double y, Site site);

// Python repr of a float and of a str.
std::string float_repr(double d);
std::string str_repr(std::string_view s);

// The length in bytes of the UTF-8 character starting at s[i]; 0 when the
// bytes there are no valid UTF-8 character.
std::size_t utf8_char_length(std::string_view s, std::size_t i) noexcept;
// The length of the character at s[i] for splitting a str into characters:
// a byte that starts no valid character counts as one.
inline std::size_t char_step(std::string_view s, std::size_t i) noexcept {
  const std::size_t n = utf8_char_length(s, i);
  return n == 0 ? 1 : n;
}
// len() of a str: its characters.
std::size_t char_count(std::string_view s) noexcept;

}  // namespace wstune::expr::detail
