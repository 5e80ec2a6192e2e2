#pragma once
/// @file expression.hpp
/// The tuning-file expression language: the Python subset that "T1" JSON
/// tuning problems (TuningSchema, read by Kernel Tuner and KTT) write their
/// parameter Values, Conditions, NDRange and argument sizes and Generator
/// fills in, e.g. "(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG" or
/// "[2**i for i in range(6)]". Parse once, evaluate many times (over up to
/// 10^6 configurations): Expression::parse builds a tree, Expression::eval
/// walks it with Python 3 semantics and allocates nothing for expressions
/// whose values are all numbers or booleans.
///
/// Source: Python 3 language reference §6 Expressions (operators, precedence,
/// comparisons, comprehensions) and §2.4 Literals, and the Python library's
/// "Built-in Functions" and "Built-in Types" (numeric tower, floor division,
/// repr). The subset, every deviation from Python and the limits are in
/// docs/expressions.md.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "wstune/error.hpp"

namespace wstune::expr {

/// Longest expression text Expression::parse accepts, in bytes (64 KiB).
inline constexpr std::size_t max_text_bytes = 64 * 1024;

/// Deepest nesting Expression::parse accepts: brackets, operators and
/// operands nested in one another (a chain "a + b + c" nests one level per
/// operator; a list or an "and"/"or" chain nests one level in all).
inline constexpr std::size_t max_depth = 200;

/// Most work one Expression::eval may do, in elements: each list element,
/// string character or range step built, each comprehension step and each
/// element a comparison, "in", min, max or sum looks at counts one. A single
/// range() or repetition longer than this fails before it is built.
inline constexpr std::uint64_t max_work = 10'000'000;

/// An expression failed to parse or to evaluate. what() names the error
/// class, the position ("column 7", or "line 2, column 3" for text with line
/// breaks), the text (or an excerpt around the position), the construct,
/// and for syntax and unsupported constructs what the subset supports.
/// Command-line tools exit with status 2 on it (it is a UsageError).
class ExprError : public wstune::UsageError {
 public:
  /// What went wrong. Python's own exception class for each is python_error().
  enum class Kind : std::uint8_t {
    syntax,         ///< not a Python expression (Python: SyntaxError)
    unsupported,    ///< valid Python outside the subset: lambda, attribute access, tuples, ...
    name,           ///< a name the Env does not bind (Python: NameError)
    type,           ///< wrong operand types, wrong argument count (Python: TypeError)
    value,          ///< e.g. range() step 0, max([]), a negative shift count (Python: ValueError)
    zero_division,  ///< division or modulo by zero, 0.0 ** negative (Python: ZeroDivisionError)
    index,          ///< list or str index out of range (Python: IndexError)
    overflow,       ///< float ** overflow, int(inf), round(inf) (Python: OverflowError)
    int_overflow,   ///< an int result beyond int64 (Python would make a big int)
    limit,          ///< text longer than max_text_bytes, nesting deeper than max_depth, work beyond max_work
  };

  /// @param kind what went wrong
  /// @param construct the offending construct, e.g. "lambda", "'/' by zero", "name 'foo'"
  /// @param offset 0-based byte offset of the construct in the text
  /// @param message the full message (what())
  ExprError(Kind kind, std::string construct, std::size_t offset, const std::string& message);
  /// What went wrong.
  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// 0-based byte offset of the offending token or construct in the text
  /// (the text's length for an unexpected end; 0 for Value accessors).
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }
  /// The offending construct, e.g. "lambda", "attribute access", "name 'foo'", "'/' by zero".
  [[nodiscard]] const std::string& construct() const noexcept { return construct_; }
  /// The exception class CPython raises for the same text: "SyntaxError",
  /// "NameError", "TypeError", "ValueError", "ZeroDivisionError",
  /// "IndexError", "OverflowError"; "" for unsupported, int_overflow and
  /// limit, where Python has a result (or its own limits).
  [[nodiscard]] std::string_view python_error() const noexcept;

 private:
  Kind kind_;
  std::size_t offset_;
  std::string construct_;
};

/// A value of the language: a Python int (64-bit two's complement here, not
/// a big integer), float (IEEE double), bool, str (UTF-8 bytes) or list.
/// Copies are deep. Source: Python library, "Built-in Types".
class Value {
 public:
  /// The five kinds, named after their Python types int, float, bool, str, list.
  enum class Kind : std::uint8_t { integer, real, boolean, string, list };

  /// The int 0.
  Value() noexcept = default;
  /// A Python int from any integer type but bool (so that Value(3) is an
  /// int, not a bool or a float).
  /// @throws ExprError (kind int_overflow, offset 0) for an unsigned value beyond int64
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Value(T v)
      : v_(checked_int(v)) {}  // NOLINT(google-explicit-constructor)
  /// A Python float.
  Value(double v) noexcept : v_(v) {}  // NOLINT(google-explicit-constructor)
  /// A Python bool.
  Value(bool v) noexcept : v_(v) {}  // NOLINT(google-explicit-constructor)
  /// A Python str holding these UTF-8 bytes.
  Value(std::string v) noexcept : v_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  /// A Python str (so that Value("ab") is a str, not a bool).
  Value(const char* v) : v_(std::string(v)) {}  // NOLINT(google-explicit-constructor)
  /// A Python list.
  Value(std::vector<Value> v) noexcept : v_(std::move(v)) {}  // NOLINT(google-explicit-constructor)

  /// Which of the five kinds this is.
  [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(v_.index()); }
  /// The Python type name: "int", "float", "bool", "str" or "list".
  [[nodiscard]] std::string_view type_name() const noexcept;
  /// True for int, float and bool (bool is an int in Python).
  [[nodiscard]] bool is_number() const noexcept { return v_.index() <= 2; }

  /// The value as an int: an int as it is, a bool as 0 or 1, a float only
  /// when it is integral and within int64 (4.0 gives 4).
  /// @throws ExprError (kind type, offset 0) for a str, a list or a float
  ///         with a fraction, NaN, an infinity or one beyond int64
  [[nodiscard]] std::int64_t as_int() const;
  /// The value as a double: a float as it is, an int or a bool converted
  /// (round to nearest, as Python's float()).
  /// @throws ExprError (kind type, offset 0) for a str or a list
  [[nodiscard]] double as_double() const;
  /// Python truthiness: 0, 0.0, -0.0, False, '' and [] are false; all else
  /// (NaN included) is true.
  [[nodiscard]] bool as_bool() const noexcept;
  /// The bytes of a str.
  /// @throws ExprError (kind type, offset 0) for any other kind
  [[nodiscard]] const std::string& as_string() const;
  /// The elements of a list.
  /// @throws ExprError (kind type, offset 0) for any other kind
  [[nodiscard]] const std::vector<Value>& as_list() const;

  /// Python repr(): 3, 3.0, 1e-05, 1e+16, inf, nan (floats in the shortest
  /// form that reads back exactly, laid out as Python lays them out), True,
  /// 'abc' (double quotes when the text has a ' and no "), [1, 2.5, 'x'].
  [[nodiscard]] std::string repr() const;
  /// Python str(): the bytes of a str as they are, repr() for all else.
  [[nodiscard]] std::string str() const;

  /// Python ==: numbers compare by value across kinds (1 == 1.0 == True,
  /// exactly, without rounding the int), str by bytes, lists element by
  /// element; values of other kinds are unequal; NaN is unequal to itself.
  friend bool operator==(const Value& a, const Value& b) noexcept;

 private:
  template <class T>
  static std::int64_t checked_int(T v) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (v > static_cast<T>(std::numeric_limits<std::int64_t>::max())) throw_unsigned_overflow();
    }
    return static_cast<std::int64_t>(v);
  }
  [[noreturn]] static void throw_unsigned_overflow();
  std::variant<std::int64_t, double, bool, std::string, std::vector<Value>> v_{std::int64_t{0}};
};

/// Where evaluation looks names up: the variables an expression can read
/// (tuning parameters, ProblemSize, the Generator's i, ...).
class Env {
 public:
  /// Virtual: Envs are used through references to this base.
  virtual ~Env();
  /// The value bound to `name`, or nullptr when it is unbound (the
  /// expression then fails with a NameError). The pointer must stay valid
  /// for the whole Expression::eval call.
  [[nodiscard]] virtual const Value* find(std::string_view name) const = 0;
};

/// An Env backed by a std::map: set names, then evaluate.
class MapEnv : public Env {
 public:
  /// An empty environment.
  MapEnv() = default;
  /// The environment holding these bindings.
  MapEnv(std::initializer_list<std::pair<const std::string, Value>> bindings) : values_(bindings) {}
  /// Binds `name` to `value`, replacing an earlier binding.
  void set(std::string_view name, Value value);
  /// Removes the binding of `name`, if any.
  void erase(std::string_view name);
  /// The bound value or nullptr.
  [[nodiscard]] const Value* find(std::string_view name) const override;

 private:
  std::map<std::string, Value, std::less<>> values_;
};

namespace detail {
/// The parsed tree of an Expression (internal, defined in lib/src/expr).
struct Program;
}  // namespace detail

class CompiledExpression;

/// A parsed expression: immutable, cheap to copy (the tree is shared), safe
/// to evaluate from several threads at once.
class Expression {
 public:
  /// Parses `text` (Python 3 language reference §6 Expressions, the subset in
  /// docs/expressions.md). Leading and trailing blanks and line breaks are
  /// allowed; line breaks inside (), [] and after a backslash too.
  /// @throws ExprError of kind syntax, unsupported, int_overflow (an integer
  ///         literal beyond int64) or limit (text or nesting)
  [[nodiscard]] static Expression parse(std::string_view text);

  /// Evaluates the tree with Python semantics, names looked up in `env`
  /// (comprehension variables shadow them inside their comprehension).
  /// @throws ExprError of any kind but syntax, at the offending construct
  [[nodiscard]] Value eval(const Env& env) const;

  /// The text it was parsed from.
  [[nodiscard]] const std::string& text() const noexcept;

  /// The free names it reads, sorted and unique: not comprehension
  /// variables where they are bound, not the called builtins.
  [[nodiscard]] std::vector<std::string> names() const;

  /// Canonical source: single spaces around binary operators, ", " in lists
  /// and calls, parentheses only where the tree needs them, literals in
  /// repr form. Parsing it gives back the same tree (and the same text).
  [[nodiscard]] std::string to_string() const;

 private:
  friend class CompiledExpression;  // compiles the tree (compiled.hpp)
  explicit Expression(std::shared_ptr<const detail::Program> p) noexcept : program_(std::move(p)) {}
  std::shared_ptr<const detail::Program> program_;
};

}  // namespace wstune::expr
