// Values, environments, the error type and its messages, and Python's repr.
#include <charconv>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "expr/expr_ops.hpp"
#include "expr/expr_program.hpp"
#include "expr/expression.hpp"

namespace wstune::expr {

namespace {

using detail::fail;
using K = ExprError::Kind;

// The exception class CPython raises for each kind ("" where it has a result).
std::string_view python_class(K k) noexcept {
  switch (k) {
    case K::syntax:
      return "SyntaxError";
    case K::name:
      return "NameError";
    case K::type:
      return "TypeError";
    case K::value:
      return "ValueError";
    case K::zero_division:
      return "ZeroDivisionError";
    case K::index:
      return "IndexError";
    case K::overflow:
      return "OverflowError";
    default:
      return "";
  }
}

std::string_view kind_label(K k) noexcept {
  switch (k) {
    case K::syntax:
      return "syntax error";
    case K::unsupported:
      return "unsupported construct";
    case K::int_overflow:
      return "integer overflow";
    case K::limit:
      return "limit exceeded";
    default:
      return python_class(k);
  }
}

constexpr std::string_view supported_hint =
    "; the subset supports numbers, strings, True/False, names, lists [a, b], x[i], unary - + ~ not, "
    "binary + - * / // % ** << >> & | ^, comparisons and in/not in (chained), and/or, a if c else b, "
    "[e for v in xs if c] and calls of abs bool float int len list max min range round str sum "
    "(docs/expressions.md)";

// The text shown in a message: all of it when short, else about 60 bytes
// around the offset; line breaks shown as \n.
std::string excerpt(std::string_view text, std::size_t offset) {
  constexpr std::size_t whole = 80, side = 30;
  std::size_t from = 0, to = text.size();
  if (text.size() > whole) {
    from = offset > side ? offset - side : 0;
    to = std::min(text.size(), offset + side);
  }
  std::string out = from > 0 ? "..." : "";
  for (std::size_t i = from; i < to; ++i) {
    if (text[i] == '\n')
      out += "\\n";
    else if (text[i] == '\r')
      out += "\\r";
    else
      out += text[i];
  }
  if (to < text.size()) out += "...";
  return out;
}

std::string position(std::string_view text, std::size_t offset) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const std::size_t column = offset - line_start + 1;
  if (text.find('\n') == std::string_view::npos) return fmt::format("column {}", column);
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace

namespace detail {

void fail(ExprError::Kind kind, std::string construct, std::string_view detail, Site site) {
  std::string message;
  if (site.text.empty()) {
    message = fmt::format("{}: {}", kind_label(kind), construct);
  } else {
    message = fmt::format("{} in expression \"{}\" at {}: {}", kind_label(kind), excerpt(site.text, site.offset),
                          position(site.text, site.offset), construct);
  }
  if (!detail.empty()) message += fmt::format(" ({})", detail);
  if (kind == K::syntax || kind == K::unsupported) message += supported_hint;
  throw ExprError(kind, std::move(construct), site.offset, message);
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits (as Python's repr, David Gay's mode 0), laid
  // out by CPython's format_float_short rules for repr: exponent form when
  // the decimal point position is <= -4 or > 16.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // [-]D[.DDD]e(+|-)XX
  std::string out;
  if (sci.front() == '-') {
    out += '-';  // not out = "-": GCC 12 under ASan reports a false -Wrestrict
    sci.remove_prefix(1);
  }
  const std::size_t e = sci.find('e');
  std::string digits(1, sci[0]);
  if (e > 1) digits.append(sci.substr(2, e - 2));
  std::string_view exp_text = sci.substr(e + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  int exp10 = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);
  const int decpt = exp10 + 1;
  const int nd = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (nd > 1) out += '.' + digits.substr(1);
    out += fmt::format("e{}{:02d}", exp10 < 0 ? '-' : '+', std::abs(exp10));
  } else if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-decpt), '0');
    out += digits;
  } else if (decpt >= nd) {
    out += digits;
    out.append(static_cast<std::size_t>(decpt - nd), '0');
    out += ".0";
  } else {
    out += digits.substr(0, static_cast<std::size_t>(decpt));
    out += '.';
    out += digits.substr(static_cast<std::size_t>(decpt));
  }
  return out;
}

std::string str_repr(std::string_view s) {
  const char quote = (s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '\\')
      out += "\\\\";
    else if (ch == quote)
      out += {'\\', quote};
    else if (ch == '\n')
      out += "\\n";
    else if (ch == '\r')
      out += "\\r";
    else if (ch == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  out += quote;
  return out;
}

std::size_t utf8_char_length(std::string_view s, std::size_t i) noexcept {
  const auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = at(i);
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    const unsigned b = at(k);
    return b >= lo && b <= hi;
  };
  if (i >= s.size()) return 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c >= 0xE1 && c <= 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

std::size_t char_count(std::string_view s) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); i += char_step(s, i)) ++n;
  return n;
}

}  // namespace detail

// ---- ExprError ----------------------------------------------------------

ExprError::ExprError(Kind kind, std::string construct, std::size_t offset, const std::string& message)
    : UsageError(message), kind_(kind), offset_(offset), construct_(std::move(construct)) {}

std::string_view ExprError::python_error() const noexcept {
  return python_class(kind_);
}

// ---- Value --------------------------------------------------------------

void Value::throw_unsigned_overflow() {
  fail(K::int_overflow, "an unsigned integer beyond int64", "Value holds 64-bit signed ints", {});
}

std::string_view Value::type_name() const noexcept {
  switch (kind()) {
    case Kind::integer:
      return "int";
    case Kind::real:
      return "float";
    case Kind::boolean:
      return "bool";
    case Kind::string:
      return "str";
    case Kind::list:
      return "list";
  }
  return "?";
}

std::int64_t Value::as_int() const {
  switch (kind()) {
    case Kind::integer:
      return std::get<std::int64_t>(v_);
    case Kind::boolean:
      return std::get<bool>(v_) ? 1 : 0;
    case Kind::real: {
      const double d = std::get<double>(v_);
      // [-2^63, 2^63) holds exactly the doubles that convert to int64.
      if (d == std::trunc(d) && d >= -0x1p63 && d < 0x1p63) return static_cast<std::int64_t>(d);
      fail(K::type, fmt::format("as_int() of float {}", detail::float_repr(d)),
           "only a float with an integral value within int64 converts", {});
    }
    default:
      fail(K::type, fmt::format("as_int() of {}", type_name()), "not a number", {});
  }
}

double Value::as_double() const {
  switch (kind()) {
    case Kind::integer:
      return static_cast<double>(std::get<std::int64_t>(v_));
    case Kind::real:
      return std::get<double>(v_);
    case Kind::boolean:
      return std::get<bool>(v_) ? 1.0 : 0.0;
    default:
      fail(K::type, fmt::format("as_double() of {}", type_name()), "not a number", {});
  }
}

bool Value::as_bool() const noexcept {
  switch (kind()) {
    case Kind::integer:
      return std::get<std::int64_t>(v_) != 0;
    case Kind::real:
      return std::get<double>(v_) != 0.0;
    case Kind::boolean:
      return std::get<bool>(v_);
    case Kind::string:
      return !std::get<std::string>(v_).empty();
    case Kind::list:
      return !std::get<std::vector<Value>>(v_).empty();
  }
  return false;
}

const std::string& Value::as_string() const {
  if (const auto* s = std::get_if<std::string>(&v_)) return *s;
  fail(K::type, fmt::format("as_string() of {}", type_name()), "not a str", {});
}

const std::vector<Value>& Value::as_list() const {
  if (const auto* l = std::get_if<std::vector<Value>>(&v_)) return *l;
  fail(K::type, fmt::format("as_list() of {}", type_name()), "not a list", {});
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::integer:
      return std::to_string(std::get<std::int64_t>(v_));
    case Kind::real:
      return detail::float_repr(std::get<double>(v_));
    case Kind::boolean:
      return std::get<bool>(v_) ? "True" : "False";
    case Kind::string:
      return detail::str_repr(std::get<std::string>(v_));
    case Kind::list: {
      std::string out = "[";
      for (const Value& e : std::get<std::vector<Value>>(v_)) {
        if (out.size() > 1) out += ", ";
        out += e.repr();
      }
      return out + "]";
    }
  }
  return {};
}

std::string Value::str() const {
  if (const auto* s = std::get_if<std::string>(&v_)) return *s;
  return repr();
}

bool operator==(const Value& a, const Value& b) noexcept {
  return detail::values_equal(a, b, nullptr);
}

// ---- environments -------------------------------------------------------

Env::~Env() = default;

void MapEnv::set(std::string_view name, Value value) {
  const auto it = values_.find(name);
  if (it != values_.end())
    it->second = std::move(value);
  else
    values_.emplace(std::string(name), std::move(value));
}

void MapEnv::erase(std::string_view name) {
  const auto it = values_.find(name);
  if (it != values_.end()) values_.erase(it);
}

const Value* MapEnv::find(std::string_view name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

}  // namespace wstune::expr
