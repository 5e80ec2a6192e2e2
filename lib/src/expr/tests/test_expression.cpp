// The tuning-file expression language (wstune/expression.hpp): every
// construct of the subset and every error class, a differential corpus of
// CPython results (tests/data/expr_corpus.json, written by
// tests/gen_expr_corpus.py), and rapidcheck properties (printer round trip,
// an independent integer oracle, the parser on random bytes, depth limits).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "expr/expression.hpp"

// Counts allocations (ExpressionT1.ScalarEvaluationAllocatesNothing).
namespace {
std::atomic<long> allocations{0};
}  // namespace
// GCC 12 pairs these malloc/free calls with new/delete expressions it inlines them into.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace wstune::expr {
// Prints Values in GoogleTest messages as Python would.
void PrintTo(const Value& v, std::ostream* os) {
  *os << v.repr();
}
}  // namespace wstune::expr

using namespace wstune::expr;
using Kind = ExprError::Kind;
using List = std::vector<Value>;

namespace {

// The environment of tests/gen_expr_corpus.py (the corpus records it too).
MapEnv corpus_env() {
  return MapEnv{{"a", 7},
                {"b", -3},
                {"c", 2.5},
                {"e", -0.75},
                {"z", 0},
                {"t", true},
                {"f", false},
                {"s", "ab"},
                {"w", "it's"},
                {"L", List{1, 2, 3}},
                {"M", List{List{1, 2}, List{3}}},
                {"F", List{0.5, -1.5, 2.0}},
                {"S", List{"x", "yz"}},
                {"ProblemSize", List{4096, 4096}}};
}

const MapEnv& env() {
  static const MapEnv e = corpus_env();
  return e;
}

Value ev(std::string_view text, const Env& in = env()) {
  return Expression::parse(text).eval(in);
}
std::string rep(std::string_view text, const Env& in = env()) {
  return ev(text, in).repr();
}

// The ExprError that parsing and evaluating `text` throws (nullopt if none).
std::optional<ExprError> error_of(std::string_view text, const Env& in = env()) {
  try {
    (void)Expression::parse(text).eval(in);
  } catch (const ExprError& e) {
    return e;
  }
  return std::nullopt;
}

// Asserts the error's kind, construct (a substring) and byte offset.
void expect_error(std::string_view text, Kind kind, std::string_view construct, std::size_t offset,
                  const Env& in = env()) {
  SCOPED_TRACE(std::string(text));
  const auto e = error_of(text, in);
  ASSERT_TRUE(e.has_value()) << "no error";
  EXPECT_EQ(static_cast<int>(e->kind()), static_cast<int>(kind)) << e->what();
  EXPECT_NE(e->construct().find(construct), std::string::npos) << "construct: " << e->construct();
  EXPECT_EQ(e->offset(), offset) << e->what();
  EXPECT_NE(std::string(e->what()).find(e->construct()), std::string::npos) << e->what();
}

// An Env that counts look-ups per name (to see what evaluation touched).
class CountingEnv : public Env {
 public:
  explicit CountingEnv(const Env& inner) : inner_(inner) {}
  const Value* find(std::string_view name) const override {
    ++counts_[std::string(name)];
    return inner_.find(name);
  }
  int count(const std::string& name) const {
    const auto it = counts_.find(name);
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  const Env& inner_;
  mutable std::map<std::string, int> counts_;
};

}  // namespace

// ---- literals -------------------------------------------------------------

TEST(ExpressionLiterals, Integers) {
  EXPECT_EQ(rep("42"), "42");
  EXPECT_EQ(rep("0"), "0");
  EXPECT_EQ(rep("00"), "0");
  EXPECT_EQ(rep("0x1F"), "31");
  EXPECT_EQ(rep("0XfF"), "255");
  EXPECT_EQ(rep("0o17"), "15");
  EXPECT_EQ(rep("0b101"), "5");
  EXPECT_EQ(rep("1_000_000"), "1000000");
  EXPECT_EQ(rep("0x_ff"), "255");
  EXPECT_EQ(rep("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(ev("7").kind(), Value::Kind::integer);
}

TEST(ExpressionLiterals, Floats) {
  EXPECT_EQ(rep("1.0"), "1.0");
  EXPECT_EQ(rep(".5"), "0.5");
  EXPECT_EQ(rep("2."), "2.0");
  EXPECT_EQ(rep("1e-3"), "0.001");
  EXPECT_EQ(rep("1E3"), "1000.0");
  EXPECT_EQ(rep("1_000.5"), "1000.5");
  EXPECT_EQ(rep("1e309"), "inf");   // beyond double: inf, as CPython
  EXPECT_EQ(rep("1e-400"), "0.0");  // below the subnormals: 0.0
  // Exponents beyond int64 (fuzz target expression, fuzz/regressions).
  EXPECT_EQ(rep("1e09223372036854775807"), "inf");
  EXPECT_EQ(rep("1e-9223372036854775808"), "0.0");
  EXPECT_EQ(rep("0.001e99999999999999999999"), "inf");
  EXPECT_EQ(rep("5e-324"), "5e-324");
  EXPECT_EQ(ev("2.5").kind(), Value::Kind::real);
}

TEST(ExpressionLiterals, BoolsStringsLists) {
  EXPECT_EQ(ev("True"), Value(true));
  EXPECT_EQ(ev("False").kind(), Value::Kind::boolean);
  EXPECT_EQ(ev("'abc'").as_string(), "abc");
  EXPECT_EQ(ev("\"abc\"").as_string(), "abc");
  EXPECT_EQ(ev(R"('a\'b\"c\\d\ne\tf')").as_string(), "a'b\"c\\d\ne\tf");
  EXPECT_EQ(ev("'h\xc3\xa9'").as_string(), "h\xc3\xa9");  // UTF-8 inside strings
  EXPECT_EQ(rep("[]"), "[]");
  EXPECT_EQ(rep("[1, 2.5, 'x', True, [3]]"), "[1, 2.5, 'x', True, [3]]");
  EXPECT_EQ(rep("[1, 2,]"), "[1, 2]");
}

TEST(ExpressionLiterals, BadLiteralsNameTheirConstruct) {
  expect_error("007", Kind::syntax, "leading zeros", 0);
  expect_error("1 + 0_7", Kind::syntax, "leading zeros", 4);
  expect_error("1__0", Kind::syntax, "invalid number", 0);
  expect_error("1_", Kind::syntax, "invalid number", 0);
  expect_error("1e", Kind::syntax, "invalid number", 0);
  expect_error("0b102", Kind::syntax, "invalid binary literal", 0);
  expect_error("0x", Kind::syntax, "invalid hexadecimal literal", 0);
  expect_error("2 * 3j", Kind::unsupported, "complex literal", 4);
  expect_error("9223372036854775808", Kind::int_overflow, "integer literal", 0);
  expect_error("0x8000000000000000", Kind::int_overflow, "integer literal", 0);
  expect_error("'abc", Kind::syntax, "unterminated string", 0);
  expect_error("'a\nb'", Kind::syntax, "unterminated string", 0);
  expect_error("'a\\x41'", Kind::unsupported, "escape sequence '\\x'", 2);
  expect_error("'''a'''", Kind::unsupported, "triple-quoted", 0);
  expect_error("f'{a}'", Kind::unsupported, "f-string", 0);
  expect_error("b'a'", Kind::unsupported, "bytes literal", 0);
  expect_error("r'a'", Kind::unsupported, "raw string", 0);
  expect_error("'a' 'b'", Kind::unsupported, "implicit string concatenation", 4);
  expect_error("'\x01'", Kind::unsupported, "control character", 1);
  expect_error("'\xff'", Kind::syntax, "invalid UTF-8", 1);
}

// ---- names and subscripts --------------------------------------------------

TEST(ExpressionNames, LookupAndNameError) {
  EXPECT_EQ(rep("a"), "7");
  EXPECT_EQ(rep("ProblemSize"), "[4096, 4096]");
  expect_error("a + foo", Kind::name, "name 'foo'", 4);
  const auto e = error_of("a + foo");
  EXPECT_EQ(e->python_error(), "NameError");
  expect_error("max + 1", Kind::unsupported, "builtin function 'max' used as a value", 0);
  MapEnv shadow = corpus_env();
  shadow.set("max", 3);
  EXPECT_EQ(rep("max + 1", shadow), "4");  // a variable may be called max; then it is one
}

TEST(ExpressionSubscripts, ListsAndStrings) {
  EXPECT_EQ(rep("ProblemSize[0]"), "4096");
  EXPECT_EQ(rep("L[-1]"), "3");
  EXPECT_EQ(rep("L[-3]"), "1");
  EXPECT_EQ(rep("L[True]"), "2");
  EXPECT_EQ(rep("M[0][1]"), "2");
  EXPECT_EQ(rep("[10, 20][1]"), "20");
  EXPECT_EQ(rep("s[1]"), "'b'");
  EXPECT_EQ(rep("'h\xc3\xa9!'[1]"), "'\xc3\xa9'");  // characters, not bytes
  EXPECT_EQ(rep("'h\xc3\xa9!'[-1]"), "'!'");
  expect_error("L[3]", Kind::index, "index 3 out of range", 1);
  expect_error("L[-4]", Kind::index, "index -4 out of range", 1);
  expect_error("s[2]", Kind::index, "index 2", 1);
  expect_error("L[1.0]", Kind::type, "list index of type float", 1);
  expect_error("a[0]", Kind::type, "subscript of int", 1);
  expect_error("L[1:2]", Kind::unsupported, "slice", 3);
  expect_error("L[:2]", Kind::unsupported, "slice", 2);
  expect_error("L[1, 2]", Kind::unsupported, "tuple index", 3);
}

// ---- operators -------------------------------------------------------------

TEST(ExpressionUnary, MinusPlusInvertNot) {
  EXPECT_EQ(rep("-a"), "-7");
  EXPECT_EQ(rep("+b"), "-3");
  EXPECT_EQ(rep("-c"), "-2.5");
  EXPECT_EQ(rep("~5"), "-6");
  EXPECT_EQ(rep("~-1"), "0");
  EXPECT_EQ(rep("-True"), "-1");
  EXPECT_EQ(rep("+True"), "1");
  EXPECT_EQ(rep("~True"), "-2");
  EXPECT_EQ(rep("not 0"), "True");
  EXPECT_EQ(rep("not s"), "False");
  EXPECT_EQ(rep("not []"), "True");
  EXPECT_EQ(rep("- - 3"), "3");
  EXPECT_EQ(rep("-0.0"), "-0.0");
  expect_error("~2.5", Kind::type, "unary '~' on float", 0);
  expect_error("-s", Kind::type, "unary '-' on str", 0);
  expect_error("-(-9223372036854775807 - 1)", Kind::int_overflow, "'-' on ints", 0);
}

TEST(ExpressionArithmetic, NumericTower) {
  EXPECT_EQ(rep("2 + 3"), "5");
  EXPECT_EQ(rep("2 + 3.0"), "5.0");
  EXPECT_EQ(rep("True + True"), "2");
  EXPECT_EQ(rep("True * 2.5"), "2.5");
  EXPECT_EQ(rep("7 - 10"), "-3");
  EXPECT_EQ(rep("6 * 7"), "42");
  EXPECT_EQ(rep("0.1 + 0.2"), "0.30000000000000004");
  EXPECT_EQ(rep("10 / 4"), "2.5");  // / is always float
  EXPECT_EQ(rep("8 / 2"), "4.0");
  EXPECT_EQ(rep("0 / -5"), "-0.0");
  EXPECT_EQ(rep("1 / 3"), "0.3333333333333333");
  // Correctly rounded int / int beyond 2**53 (CPython's long_true_divide).
  EXPECT_EQ(rep("9007199254740993 / 1"), "9007199254740992.0");
  EXPECT_EQ(rep("9223372036854775807 / 3"), "3.0744573456182584e+18");
  EXPECT_EQ(rep("4611686018427387905 / 4611686018427387903"), "1.0");
  EXPECT_EQ(rep("2048 * 16 // 64"), "512");
}

TEST(ExpressionArithmetic, FloorDivisionAndModuloTakeTheDivisorsSign) {
  EXPECT_EQ(rep("7 // 2"), "3");
  EXPECT_EQ(rep("-7 // 2"), "-4");
  EXPECT_EQ(rep("7 // -2"), "-4");
  EXPECT_EQ(rep("-7 // -2"), "3");
  EXPECT_EQ(rep("-7 % 2"), "1");
  EXPECT_EQ(rep("7 % -2"), "-1");
  EXPECT_EQ(rep("-7 % -2"), "-1");
  EXPECT_EQ(rep("7.5 % -2"), "-0.5");
  EXPECT_EQ(rep("-7.5 % 2"), "0.5");
  EXPECT_EQ(rep("-7.5 // 2"), "-4.0");
  EXPECT_EQ(rep("-0.0 % 5"), "0.0");
  EXPECT_EQ(rep("0.0 % -5"), "-0.0");
  EXPECT_EQ(rep("7 // 0.1"), "69.0");  // fmod-based, as CPython: not 70.0
  EXPECT_EQ(rep("(-9223372036854775807 - 1) % -1"), "0");
  expect_error("(-9223372036854775807 - 1) // -1", Kind::int_overflow, "'//' on ints", 27);
}

TEST(ExpressionArithmetic, Powers) {
  EXPECT_EQ(rep("2 ** 10"), "1024");
  EXPECT_EQ(rep("2 ** -1"), "0.5");
  EXPECT_EQ(rep("0 ** 0"), "1");
  EXPECT_EQ(rep("(-2) ** 3"), "-8");
  EXPECT_EQ(rep("-2 ** 2"), "-4");        // ** binds tighter than unary minus on its left
  EXPECT_EQ(rep("2 ** -1 ** 2"), "0.5");  // ... and takes a unary operand on its right
  EXPECT_EQ(rep("2 ** 3 ** 2"), "512");   // right-associative
  EXPECT_EQ(rep("(-2) ** 63"), "-9223372036854775808");
  EXPECT_EQ(rep("10 ** -2"), "0.01");
  EXPECT_EQ(rep("4 ** 0.5"), "2.0");
  EXPECT_EQ(rep("(-1) ** 1001"), "-1");
  EXPECT_EQ(rep("(-1.0) ** 1e300"), "1.0");
  EXPECT_EQ(rep("0.5 ** 1e309"), "0.0");
  EXPECT_EQ(rep("(-0.0) ** 3"), "-0.0");
  EXPECT_EQ(rep("True ** 2"), "1");
  expect_error("2 ** 63", Kind::int_overflow, "'**' on ints", 2);
  expect_error("0 ** -1", Kind::zero_division, "'**' by zero", 2);
  expect_error("2.0 ** 1024", Kind::overflow, "'**' on floats", 4);
  expect_error("(-8) ** 0.5", Kind::unsupported, "complex result", 5);
}

TEST(ExpressionArithmetic, DivisionByZeroNamesTheOperator) {
  expect_error("a / 0", Kind::zero_division, "'/' by zero", 2);
  expect_error("a // z", Kind::zero_division, "'//' by zero", 2);
  expect_error("a % 0", Kind::zero_division, "'%' by zero", 2);
  expect_error("c / 0.0", Kind::zero_division, "'/' by zero", 2);
  expect_error("c // 0", Kind::zero_division, "'//' by zero", 2);
  expect_error("c % False", Kind::zero_division, "'%' by zero", 2);
  EXPECT_EQ(error_of("1 / 0")->python_error(), "ZeroDivisionError");
}

TEST(ExpressionArithmetic, IntegerOverflowIsAnError) {
  expect_error("9223372036854775807 + 1", Kind::int_overflow, "'+' on ints", 20);
  expect_error("-9223372036854775807 - 2", Kind::int_overflow, "'-' on ints", 21);
  expect_error("4294967296 * 4294967296", Kind::int_overflow, "'*' on ints", 11);
  expect_error("abs(-9223372036854775807 - 1)", Kind::int_overflow, "'-' on ints", 0);
  EXPECT_EQ(error_of("2 ** 64")->python_error(), "");  // Python would give a big int
}

TEST(ExpressionArithmetic, Sequences) {
  EXPECT_EQ(rep("s + 'c'"), "'abc'");
  EXPECT_EQ(rep("s * 3"), "'ababab'");
  EXPECT_EQ(rep("2 * s"), "'abab'");
  EXPECT_EQ(rep("s * -1"), "''");
  EXPECT_EQ(rep("s * True"), "'ab'");
  EXPECT_EQ(rep("L + [4]"), "[1, 2, 3, 4]");
  EXPECT_EQ(rep("[0] * 3"), "[0, 0, 0]");
  EXPECT_EQ(rep("M * 2"), "[[1, 2], [3], [1, 2], [3]]");
  expect_error("s + 1", Kind::type, "'+' on str and int", 2);
  expect_error("L - L", Kind::type, "'-' on list and list", 2);
  expect_error("s * 2.0", Kind::type, "'*' on str and float", 2);
  expect_error("s * s", Kind::type, "'*' on str and str", 2);
  expect_error("'%d' % 3", Kind::unsupported, "'%' string formatting", 5);
}

TEST(ExpressionBitwise, AndOrXorShifts) {
  EXPECT_EQ(rep("5 & 3"), "1");
  EXPECT_EQ(rep("5 | 3"), "7");
  EXPECT_EQ(rep("5 ^ 3"), "6");
  EXPECT_EQ(rep("-5 & 3"), "3");
  EXPECT_EQ(rep("1 << 10"), "1024");
  EXPECT_EQ(rep("-5 >> 1"), "-3");
  EXPECT_EQ(rep("-1 >> 70"), "-1");
  EXPECT_EQ(rep("5 >> 70"), "0");
  EXPECT_EQ(rep("-1 << 63"), "-9223372036854775808");
  EXPECT_EQ(rep("True & True"), "True");  // bool op bool stays bool
  EXPECT_EQ(rep("True ^ True"), "False");
  EXPECT_EQ(rep("True & 3"), "1");
  EXPECT_EQ(rep("True << 2"), "4");
  EXPECT_EQ(rep("1 | 2 ^ 3 & 4 << 1"), "3");  // | < ^ < & < <<
  expect_error("1 << -1", Kind::value, "'<<' by a negative count", 2);
  expect_error("1 >> -1", Kind::value, "'>>' by a negative count", 2);
  expect_error("1 << 63", Kind::int_overflow, "'<<' on ints", 2);
  expect_error("5 & 1.0", Kind::type, "'&' on int and float", 2);
}

// ---- comparisons, boolean operators, conditional --------------------------

TEST(ExpressionComparisons, Values) {
  EXPECT_EQ(rep("1 == 1.0"), "True");
  EXPECT_EQ(rep("True == 1 == 1.0"), "True");
  EXPECT_EQ(rep("1 == 'a'"), "False");
  EXPECT_EQ(rep("1 != 'a'"), "True");
  EXPECT_EQ(rep("9007199254740993 == 9007199254740992.0"), "False");  // exact, not via double
  EXPECT_EQ(rep("9007199254740993 > 9007199254740992.0"), "True");
  EXPECT_EQ(rep("9223372036854775807 < 9223372036854775808.0"), "True");
  EXPECT_EQ(rep("'a' < 'b' < 'bc'"), "True");
  EXPECT_EQ(rep("[1, 2] < [1, 3]"), "True");
  EXPECT_EQ(rep("[1, 2] < [1, 2, 0]"), "True");
  EXPECT_EQ(rep("[1, 'a'] == [1, 2]"), "False");
  EXPECT_EQ(rep("(1e309 - 1e309) == (1e309 - 1e309)"), "False");  // NaN
  EXPECT_EQ(rep("(1e309 - 1e309) != 1"), "True");
  expect_error("1 < 'a'", Kind::type, "'<' between int and str", 2);
  expect_error("[1, 'a'] < [1, 2]", Kind::type, "'<' between str and int", 9);
}

TEST(ExpressionComparisons, MembershipInListsAndStrings) {
  EXPECT_EQ(rep("2 in L"), "True");
  EXPECT_EQ(rep("2.0 in L"), "True");
  EXPECT_EQ(rep("4 not in L"), "True");
  EXPECT_EQ(rep("[3] in M"), "True");
  EXPECT_EQ(rep("'b' in s"), "True");
  EXPECT_EQ(rep("'' in s"), "True");
  EXPECT_EQ(rep("'ba' in s"), "False");
  expect_error("1 in s", Kind::type, "'in' of int in str", 2);
  expect_error("1 in 5", Kind::type, "'in' of int", 2);
  expect_error("a is b", Kind::unsupported, "'is' comparison", 2);
  expect_error("a is not b", Kind::unsupported, "'is' comparison", 2);
}

TEST(ExpressionComparisons, ChainsEvaluateTheMiddleOnceAndStopEarly) {
  EXPECT_EQ(rep("1 < 2 < 3"), "True");
  EXPECT_EQ(rep("1 < 3 < 2"), "False");
  EXPECT_EQ(rep("3 > 2 > 1 == 1"), "True");
  EXPECT_EQ(rep("1 < a in L"), "False");
  CountingEnv counting(env());
  EXPECT_EQ(ev("z < a < 10", counting), Value(true));
  EXPECT_EQ(counting.count("a"), 1);
  CountingEnv stops(env());
  EXPECT_EQ(ev("a < z < b < c", stops), Value(false));  // 7 < 0 is false: nothing after it runs
  EXPECT_EQ(stops.count("b"), 0);
  EXPECT_EQ(stops.count("c"), 0);
  EXPECT_EQ(rep("a < z < undefined"), "False");
}

TEST(ExpressionBoolean, AndOrReturnTheDecidingOperand) {
  EXPECT_EQ(rep("t and a"), "7");
  EXPECT_EQ(rep("f and a"), "False");
  EXPECT_EQ(rep("0 or s"), "'ab'");
  EXPECT_EQ(rep("[] or L"), "[1, 2, 3]");
  EXPECT_EQ(rep("z or f or ''"), "''");
  EXPECT_EQ(rep("1 and 2 and 3"), "3");
  EXPECT_EQ(rep("'' and 1 / 0"), "''");
  EXPECT_EQ(rep("1 or 1 / 0"), "1");
  EXPECT_EQ(rep("t or undefined"), "True");
  EXPECT_EQ(rep("not a == 7"), "False");  // not binds looser than ==
  EXPECT_EQ(rep("f or t and z"), "0");    // and binds tighter than or
  CountingEnv counting(env());
  (void)ev("f and a and b", counting);
  EXPECT_EQ(counting.count("a"), 0);
  EXPECT_EQ(counting.count("b"), 0);
}

TEST(ExpressionConditional, IsLazyAndRightAssociative) {
  EXPECT_EQ(rep("a if t else 1 / 0"), "7");
  EXPECT_EQ(rep("1 / 0 if f else b"), "-3");
  EXPECT_EQ(rep("1 if f else 2 if f else 3"), "3");
  EXPECT_EQ(rep("(1 if t else 2) + 10"), "11");
  EXPECT_EQ(rep("1 + a if f else 0"), "0");  // the conditional binds loosest
  expect_error("a if b", Kind::syntax, "unexpected end", 6);
}

// ---- builtins ---------------------------------------------------------------

TEST(ExpressionBuiltins, MinMax) {
  EXPECT_EQ(rep("min(3, 1, 2)"), "1");
  EXPECT_EQ(rep("max(3, 2.5, True)"), "3");
  EXPECT_EQ(rep("max(True, 1)"), "True");  // the first of equal maxima, as Python
  EXPECT_EQ(rep("max(1, True)"), "1");
  EXPECT_EQ(rep("min(L)"), "1");
  EXPECT_EQ(rep("max(F)"), "2.0");
  EXPECT_EQ(rep("max(s)"), "'b'");
  EXPECT_EQ(rep("max(M)"), "[3]");
  EXPECT_EQ(rep("min([c, a])"), "2.5");
  expect_error("max()", Kind::type, "max() with 0 arguments", 0);
  expect_error("max([])", Kind::value, "max() of an empty sequence", 0);
  expect_error("min(5)", Kind::type, "iteration over int", 0);
  expect_error("min(1, 'a')", Kind::type, "'<' between str and int", 0);
  expect_error("max(L, key=abs)", Kind::unsupported, "keyword argument", 7);
  expect_error("max(*L)", Kind::unsupported, "argument unpacking", 4);
}

TEST(ExpressionBuiltins, NumberConversions) {
  EXPECT_EQ(rep("abs(-3)"), "3");
  EXPECT_EQ(rep("abs(-2.5)"), "2.5");
  EXPECT_EQ(rep("abs(True)"), "1");
  EXPECT_EQ(rep("int(-2.7)"), "-2");
  EXPECT_EQ(rep("int(True)"), "1");
  EXPECT_EQ(rep("int()"), "0");
  EXPECT_EQ(rep("float(7)"), "7.0");
  EXPECT_EQ(rep("float()"), "0.0");
  EXPECT_EQ(rep("bool([])"), "False");
  EXPECT_EQ(rep("bool('0')"), "True");
  EXPECT_EQ(rep("bool()"), "False");
  EXPECT_EQ(rep("round(2.5)"), "2");  // half to even
  EXPECT_EQ(rep("round(3.5)"), "4");
  EXPECT_EQ(rep("round(-0.5)"), "0");
  EXPECT_EQ(rep("round(-1.5)"), "-2");
  EXPECT_EQ(rep("round(0.49999999999999994)"), "0");
  EXPECT_EQ(rep("round(7)"), "7");
  EXPECT_EQ(ev("round(2.5)").kind(), Value::Kind::integer);
  expect_error("abs(s)", Kind::type, "abs() of str", 0);
  expect_error("int(1e309)", Kind::overflow, "int() of inf", 0);
  expect_error("int(1e309 - 1e309)", Kind::value, "int() of nan", 0);
  expect_error("int(1e19)", Kind::int_overflow, "int() beyond int64", 0);
  expect_error("round(1e309)", Kind::overflow, "round() of inf", 0);
  expect_error("round(2.675, 2)", Kind::unsupported, "round() with ndigits", 0);
  expect_error("int('3')", Kind::unsupported, "int() of a str", 0);
  expect_error("float('inf')", Kind::unsupported, "float() of a str", 0);
  expect_error("int(L)", Kind::type, "int() of list", 0);
  expect_error("abs(1, 2)", Kind::type, "abs() with 2 arguments", 0);
}

TEST(ExpressionBuiltins, StrLenListSum) {
  EXPECT_EQ(rep("str(1e16)"), "'1e+16'");
  EXPECT_EQ(rep("str(0.1)"), "'0.1'");
  EXPECT_EQ(rep("str(L)"), "'[1, 2, 3]'");
  EXPECT_EQ(rep("str(s)"), "'ab'");
  EXPECT_EQ(rep("str(True)"), "'True'");
  EXPECT_EQ(rep("str()"), "''");
  EXPECT_EQ(rep("len(L)"), "3");
  EXPECT_EQ(rep("len(s)"), "2");
  EXPECT_EQ(rep("len('h\xc3\xa9')"), "2");  // characters, not bytes
  EXPECT_EQ(rep("list(L)"), "[1, 2, 3]");
  EXPECT_EQ(rep("list(s)"), "['a', 'b']");
  EXPECT_EQ(rep("list()"), "[]");
  EXPECT_EQ(rep("sum(L)"), "6");
  EXPECT_EQ(rep("sum(F)"), "1.0");
  EXPECT_EQ(rep("sum([])"), "0");
  EXPECT_EQ(rep("sum([0.1, 0.2, 0.3])"), "0.6000000000000001");  // left to right, as Python 3.11
  EXPECT_EQ(rep("sum(M, [])"), "[1, 2, 3]");
  EXPECT_EQ(rep("sum(L, 10)"), "16");
  expect_error("len(5)", Kind::type, "len() of int", 0);
  expect_error("list(5)", Kind::type, "iteration over int", 0);
  expect_error("sum(['a'])", Kind::type, "'+' on int and str", 0);
  expect_error("sum(L, 'x')", Kind::type, "sum() of strs", 0);
}

TEST(ExpressionBuiltins, Range) {
  EXPECT_EQ(rep("range(4)"), "[0, 1, 2, 3]");  // a list here (docs/expressions.md)
  EXPECT_EQ(rep("range(2, 5)"), "[2, 3, 4]");
  EXPECT_EQ(rep("range(10, 0, -3)"), "[10, 7, 4, 1]");
  EXPECT_EQ(rep("range(5, 5)"), "[]");
  EXPECT_EQ(rep("range(-3)"), "[]");
  EXPECT_EQ(rep("list(range(1, 9))"), "[1, 2, 3, 4, 5, 6, 7, 8]");
  EXPECT_EQ(rep("len(range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904))"), "4");
  expect_error("range(0, 5, 0)", Kind::value, "range() step 0", 0);
  expect_error("range(1.5)", Kind::type, "range() of float", 0);
  expect_error("range()", Kind::type, "range() with 0 arguments", 0);
  expect_error("range(10 ** 8)", Kind::limit, "range() length", 0);
}

TEST(ExpressionBuiltins, OnlyTheSubsetsBuiltinsCanBeCalled) {
  expect_error("pow(2, 3)", Kind::unsupported, "call of 'pow'", 0);
  expect_error("1 + foo(2)", Kind::unsupported, "call of 'foo'", 4);
  expect_error("L[0](2)", Kind::unsupported, "call of a computed value", 4);
  MapEnv shadow = corpus_env();
  shadow.set("max", 3);
  expect_error("max(1, 2)", Kind::type, "call of 'max', a int here", 0,
               shadow);  // Python: 'int' object is not callable
  shadow.set("range", 1);
  expect_error("[i for i in range(3)]", Kind::type, "call of 'range'", 12, shadow);
  EXPECT_EQ(rep("[max(i, 1) for i in L]"), "[1, 2, 3]");
  expect_error("[max(max, 1) for max in L]", Kind::type, "call of 'max'", 1);
}

// ---- comprehensions ---------------------------------------------------------

TEST(ExpressionComprehensions, ValuesFiltersAndScope) {
  EXPECT_EQ(rep("[i for i in range(3, 35, 8)]"), "[3, 11, 19, 27]");
  EXPECT_EQ(rep("[2**i for i in range(6)]"), "[1, 2, 4, 8, 16, 32]");
  EXPECT_EQ(rep("[x for x in L if x % 2]"), "[1, 3]");
  EXPECT_EQ(rep("[x * x for x in range(5) if x != 2 if x]"), "[1, 9, 16]");
  EXPECT_EQ(rep("[c + '!' for c in s]"), "['a!', 'b!']");
  EXPECT_EQ(rep("[len(r) for r in M]"), "[2, 1]");
  EXPECT_EQ(rep("[[y for y in range(x)] for x in range(3)]"), "[[], [0], [0, 1]]");
  EXPECT_EQ(rep("[a for a in range(a)]"), "[0, 1, 2, 3, 4, 5, 6]");  // the iterable sees the outer a
  EXPECT_EQ(rep("[a * 2 for a in L] + [a]"), "[2, 4, 6, 7]");        // a is 7 again outside
  EXPECT_EQ(rep("[x for x in []]"), "[]");
  EXPECT_EQ(rep("[\n  x\n  for x in L\n]"), "[1, 2, 3]");
  expect_error("[x for x in 5]", Kind::type, "iteration over int", 12);
  expect_error("[y for x in L]", Kind::name, "name 'y'", 1);
  expect_error("[x for x in L for y in L]", Kind::unsupported, "nested 'for'", 14);
  expect_error("[x for x, y in L]", Kind::unsupported, "tuple target", 8);
  expect_error("(x for x in L)", Kind::unsupported, "generator expression", 3);
  expect_error("sum(x for x in L)", Kind::unsupported, "generator expression", 6);
  expect_error("[x for x in a if b else c]", Kind::syntax, "unexpected keyword 'else'", 19);
}

// ---- syntax: parentheses, whitespace, unsupported constructs ----------------

TEST(ExpressionSyntax, ParenthesesAndWhitespace) {
  EXPECT_EQ(rep("(1 + 2) * 3"), "9");
  EXPECT_EQ(rep("1 + 2 * 3"), "7");
  EXPECT_EQ(rep("((((a))))"), "7");
  EXPECT_EQ(rep("  a  "), "7");
  EXPECT_EQ(rep("\ta\n"), "7");
  EXPECT_EQ(rep("\n\na + 1\n\n"), "8");
  EXPECT_EQ(rep("(a +\n b)"), "4");
  EXPECT_EQ(rep("max(a,\r\n    b)"), "7");
  EXPECT_EQ(rep("a + \\\n b"), "4");
  EXPECT_EQ(rep("a+b*c-L[0]"), "-1.5");
  expect_error("a +\n b", Kind::syntax, "line break outside brackets", 3);
  expect_error("", Kind::syntax, "empty expression", 0);
  expect_error("   \n ", Kind::syntax, "empty expression", 5);
  expect_error("(1", Kind::syntax, "unexpected end", 2);
  expect_error("1)", Kind::syntax, "unexpected ')'", 1);
  expect_error("1 2", Kind::syntax, "unexpected number 2", 2);
  expect_error("1 + * 2", Kind::syntax, "unexpected '*'", 4);
  expect_error("a $ b", Kind::syntax, "invalid character '$'", 2);
  expect_error("!a", Kind::syntax, "'!'", 0);
  expect_error("1 + not 2", Kind::syntax, "unexpected keyword 'not'", 4);
  expect_error("a not b", Kind::syntax, "unexpected keyword 'not'", 2);
  expect_error("a \\ b", Kind::syntax, "backslash", 2);
}

TEST(ExpressionSyntax, UnsupportedConstructsAreNamed) {
  expect_error("lambda x: x", Kind::unsupported, "lambda", 0);
  expect_error("a.b", Kind::unsupported, "attribute access", 1);
  expect_error("L[0].real", Kind::unsupported, "attribute access", 4);
  expect_error("{1: 2}", Kind::unsupported, "dict or set display", 0);
  expect_error("{1, 2}", Kind::unsupported, "dict or set display", 0);
  expect_error("(1, 2)", Kind::unsupported, "tuple", 2);
  expect_error("()", Kind::unsupported, "tuple", 0);
  expect_error("1, 2", Kind::unsupported, "tuple", 1);
  expect_error("(x := 3)", Kind::unsupported, "assignment expression ':='", 3);
  expect_error("[*L]", Kind::unsupported, "starred expression", 1);
  expect_error("a @ b", Kind::unsupported, "matrix multiplication", 2);
  expect_error("a # comment", Kind::unsupported, "comment", 2);
  expect_error("None", Kind::unsupported, "None", 0);
  expect_error("...", Kind::unsupported, "Ellipsis", 0);
  expect_error("a = 1", Kind::syntax, "assignment '='", 2);
  expect_error("a += 1", Kind::syntax, "augmented assignment '+='", 2);
  expect_error("1; 2", Kind::syntax, "';' (statements)", 1);
  expect_error("import os", Kind::syntax, "'import'", 0);
  expect_error("await a", Kind::syntax, "'await'", 0);
  expect_error("yield a", Kind::syntax, "'yield'", 0);
  expect_error("a if b else c.d", Kind::unsupported, "attribute access", 13);
  expect_error("caf\xc3\xa9", Kind::unsupported, "non-ASCII character", 3);
}

TEST(ExpressionErrors, MessagesNameClassPositionConstructAndTheSubset) {
  const auto z = error_of("a // (b + 3)");
  ASSERT_TRUE(z);
  const std::string m = z->what();
  EXPECT_NE(m.find("ZeroDivisionError"), std::string::npos) << m;
  EXPECT_NE(m.find("column 3"), std::string::npos) << m;
  EXPECT_NE(m.find("\"a // (b + 3)\""), std::string::npos) << m;
  EXPECT_NE(m.find("'//' by zero"), std::string::npos) << m;
  const auto l = error_of("lambda: 1");
  const std::string lm = l->what();
  EXPECT_NE(lm.find("unsupported construct"), std::string::npos) << lm;
  EXPECT_NE(lm.find("column 1"), std::string::npos) << lm;
  EXPECT_NE(lm.find("the subset supports"), std::string::npos) << lm;
  EXPECT_NE(lm.find("docs/expressions.md"), std::string::npos) << lm;
  const auto multi = error_of("[1,\n 2 +\n foo]");
  EXPECT_NE(std::string(multi->what()).find("line 3, column 2"), std::string::npos) << multi->what();
  EXPECT_EQ(multi->offset(), 10u);
  // Long texts show an excerpt around the position.
  const std::string long_text = std::string(500, ' ') + "a +" + std::string(500, ' ') + "1 / 0";
  const auto far = error_of(long_text);
  const std::string fm = far->what();
  EXPECT_LT(fm.size(), 1000u);
  EXPECT_NE(fm.find("1 / 0"), std::string::npos) << fm;
  EXPECT_NE(fm.find("column 1006"), std::string::npos) << fm;
  // It is a UsageError (exit status 2 in the tools).
  EXPECT_THROW((void)Expression::parse("1 +"), wstune::UsageError);
}

TEST(ExpressionErrors, PythonClassNames) {
  const std::map<std::string, std::string> expected = {{"1 +", "SyntaxError"},
                                                       {"foo", "NameError"},
                                                       {"1 + 's'", "TypeError"},
                                                       {"max([])", "ValueError"},
                                                       {"1 // 0", "ZeroDivisionError"},
                                                       {"L[9]", "IndexError"},
                                                       {"int(1e309)", "OverflowError"},
                                                       {"lambda: 1", ""},
                                                       {"2 ** 64", ""},
                                                       {"range(10 ** 9)", ""}};
  for (const auto& [text, cls] : expected) {
    const auto e = error_of(text);
    ASSERT_TRUE(e) << text;
    EXPECT_EQ(e->python_error(), cls) << text;
  }
}

// ---- limits -------------------------------------------------------------------

TEST(ExpressionLimits, NestingDepth) {
  const auto nested = [](std::size_t n) { return std::string(n, '(') + "1" + std::string(n, ')'); };
  EXPECT_EQ(rep(nested(max_depth - 1)), "1");
  expect_error(nested(max_depth), Kind::limit, "nesting", max_depth);
  std::string sum = "1";
  for (std::size_t k = 1; k < max_depth; ++k) sum += " + 1";
  EXPECT_EQ(rep(sum), std::to_string(max_depth));  // a chain of 199 '+': depth 200
  expect_error(sum + " + 1", Kind::limit, "nesting", sum.size() + 1);
  std::string conj = "t";
  for (int k = 0; k < 5000; ++k) conj += " and t";
  EXPECT_EQ(rep(conj), "True");  // an and-chain nests one level
  std::string big_list = "[";
  for (int k = 0; k < 5000; ++k) big_list += "1, ";
  EXPECT_EQ(ev(big_list + "]").as_list().size(), 5000u);
}

TEST(ExpressionLimits, HostileDeepInputsFailCleanly) {
  constexpr std::size_t n = 100000;
  const std::vector<std::string> inputs = {
      std::string(n, '(') + "1" + std::string(n, ')'),
      std::string(n, '-') + "1",
      std::string(n, '['),
      std::string(n, '~') + "1",
      [] {
        std::string s;
        for (std::size_t k = 0; k < n / 4; ++k) s += "not ";
        return s + "1";
      }(),
      [] {
        std::string s;
        for (std::size_t k = 0; k < n / 5; ++k) s += "2 ** ";
        return s + "2";
      }(),
      [] {
        std::string s;
        for (std::size_t k = 0; k < n / 12; ++k) s += "1 if t else ";
        return s + "2";
      }(),
      [] {
        std::string s = "1";
        for (std::size_t k = 0; k < n / 4; ++k) s += " + 1";
        return s;
      }(),
      [] {
        std::string s = "L";
        for (std::size_t k = 0; k < n / 3; ++k) s += "[0]";
        return s;
      }(),
  };
  for (const std::string& text : inputs) {
    // 100,000 deep is beyond the text limit; the first 64 KiB are beyond the nesting limit.
    const auto whole = error_of(text);
    ASSERT_TRUE(whole) << text.substr(0, 40);
    EXPECT_EQ(whole->construct(), "text length");
    const auto e = error_of(text.substr(0, max_text_bytes));
    ASSERT_TRUE(e) << text.substr(0, 40);
    EXPECT_EQ(e->kind(), Kind::limit) << e->what();
    EXPECT_EQ(e->construct(), "nesting") << e->what();
  }
  const auto too_long = error_of(std::string(max_text_bytes + 1, ' '));
  ASSERT_TRUE(too_long);
  EXPECT_EQ(too_long->kind(), Kind::limit);
  EXPECT_EQ(too_long->construct(), "text length");
}

TEST(ExpressionLimits, WorkBudget) {
  expect_error("[0] * 100000000", Kind::limit, "evaluation work", 4);
  expect_error("'ab' * 100000000", Kind::limit, "evaluation work", 5);
  expect_error("[[0 for j in range(5000)] for i in range(5000)]", Kind::limit, "evaluation work", 1);
  const std::string twice = "[0 for j in range(9000000) if 0] + [0 for j in range(9000000) if 0]";
  expect_error(twice, Kind::limit, "evaluation work", twice.find("[0", 1));  // the second one runs out
  EXPECT_EQ(rep("len([0 for i in range(1000000)])"), "1000000");
  EXPECT_EQ(rep("sum(range(4000000))"), "7999998000000");
}

// ---- Value API ------------------------------------------------------------------

TEST(ExpressionValue, ReprAsPythonPrintsIt) {
  EXPECT_EQ(Value(3).repr(), "3");
  EXPECT_EQ(Value(3.0).repr(), "3.0");
  EXPECT_EQ(Value(1e-05).repr(), "1e-05");
  EXPECT_EQ(Value(0.0001).repr(), "0.0001");
  EXPECT_EQ(Value(1e16).repr(), "1e+16");
  EXPECT_EQ(Value(1234567890123456.0).repr(), "1234567890123456.0");
  EXPECT_EQ(Value(123456789012345678.0).repr(), "1.2345678901234568e+17");
  EXPECT_EQ(Value(1.5e-7).repr(), "1.5e-07");
  EXPECT_EQ(Value(-0.0).repr(), "-0.0");
  EXPECT_EQ(Value(HUGE_VAL).repr(), "inf");
  EXPECT_EQ(Value(-HUGE_VAL).repr(), "-inf");
  EXPECT_EQ(Value(std::nan("")).repr(), "nan");
  EXPECT_EQ(Value(true).repr(), "True");
  EXPECT_EQ(Value("abc").repr(), "'abc'");
  EXPECT_EQ(Value("it's").repr(), "\"it's\"");
  EXPECT_EQ(Value("'\"").repr(), "'\\'\"'");
  EXPECT_EQ(Value("a\\b\n\t\r\x01").repr(), "'a\\\\b\\n\\t\\r\\x01'");
  EXPECT_EQ(Value(List{1, 2.5, "x", List{}}).repr(), "[1, 2.5, 'x', []]");
  EXPECT_EQ(Value("abc").str(), "abc");
  EXPECT_EQ(Value(List{"abc"}).str(), "['abc']");
}

TEST(ExpressionValue, AccessorsAndEquality) {
  EXPECT_EQ(Value(true).as_int(), 1);
  EXPECT_EQ(Value(4.0).as_int(), 4);
  EXPECT_EQ(Value(std::size_t{5}).as_int(), 5);
  EXPECT_THROW((void)Value(std::uint64_t{1} << 63).kind(), ExprError);
  EXPECT_THROW((void)Value(2.5).as_int(), ExprError);
  EXPECT_THROW((void)Value(1e19).as_int(), ExprError);
  EXPECT_THROW((void)Value("1").as_int(), ExprError);
  EXPECT_EQ(Value(3).as_double(), 3.0);
  EXPECT_EQ(Value(false).as_double(), 0.0);
  EXPECT_THROW((void)Value(List{}).as_double(), ExprError);
  EXPECT_FALSE(Value(0.0).as_bool());
  EXPECT_TRUE(Value(std::nan("")).as_bool());
  EXPECT_FALSE(Value("").as_bool());
  EXPECT_TRUE(Value(List{Value(0)}).as_bool());
  EXPECT_THROW((void)Value(1).as_string(), ExprError);
  EXPECT_THROW((void)Value("x").as_list(), ExprError);
  EXPECT_EQ(Value(1), Value(1.0));
  EXPECT_EQ(Value(1), Value(true));
  EXPECT_NE(Value(1), Value("1"));
  EXPECT_EQ(Value(List{1, 2}), Value(List{1.0, true + 1}));
  EXPECT_NE(Value(List{1, 2}), Value(List{1}));
  EXPECT_NE(Value(std::nan("")), Value(std::nan("")));
  EXPECT_EQ(Value().kind(), Value::Kind::integer);
  EXPECT_EQ(Value(2.5).type_name(), "float");
  EXPECT_TRUE(Value(true).is_number());
  EXPECT_FALSE(Value("1").is_number());
  try {
    (void)Value(2.5).as_int();
  } catch (const ExprError& e) {
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(std::string(e.what()).find("float 2.5"), std::string::npos) << e.what();
  }
}

TEST(ExpressionEnv, MapEnvSetReplaceErase) {
  MapEnv m;
  EXPECT_EQ(m.find("x"), nullptr);
  m.set("x", 1);
  m.set("x", 2);
  ASSERT_NE(m.find("x"), nullptr);
  EXPECT_EQ(*m.find("x"), Value(2));
  EXPECT_EQ(rep("x * 3", m), "6");
  m.erase("x");
  EXPECT_EQ(m.find("x"), nullptr);
}

// ---- names, printing, sharing -----------------------------------------------

TEST(ExpressionNames, FreeNamesSortedUnique) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Expression::parse("(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG").names(), (V{"MDIMC", "MWG", "VWM"}));
  EXPECT_EQ(Expression::parse("[i * k for i in range(n) if i != m]").names(), (V{"k", "m", "n"}));
  EXPECT_EQ(Expression::parse("[x for x in x]").names(), (V{"x"}));  // the iterable's x is free
  EXPECT_EQ(Expression::parse("[x for x in L] + [x]").names(), (V{"L", "x"}));
  EXPECT_EQ(Expression::parse("max(a, min(b, 1))").names(), (V{"a", "b"}));
  EXPECT_EQ(Expression::parse("max").names(), (V{"max"}));  // a value, read from the Env
  EXPECT_EQ(Expression::parse("1 + 2").names(), V{});
  EXPECT_EQ(Expression::parse("[[y for y in x] for x in M]").names(), (V{"M"}));
}

TEST(ExpressionPrint, CanonicalText) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG", "MWG // (MDIMC * VWM) * (MDIMC * VWM) == MWG"},
      {"((a + b)) * c", "(a + b) * c"},
      {"a - (b - c)", "a - (b - c)"},
      {"(a - b) - c", "a - b - c"},
      {"-2**2", "-2 ** 2"},
      {"(-2)**2", "(-2) ** 2"},
      {"(2**3)**2", "(2 ** 3) ** 2"},
      {"2**3**2", "2 ** 3 ** 2"},
      {"2**-1", "2 ** -1"},
      {"- - a", "--a"},
      {"not (a and b)", "not (a and b)"},
      {"(not a) == b", "(not a) == b"},
      {"(a < b) < c", "(a < b) < c"},
      {"a < b < c", "a < b < c"},
      {"a not in L", "a not in L"},
      {"(a or b) and c", "(a or b) and c"},
      {"(a and b) and c", "(a and b) and c"},
      {"a and b and c", "a and b and c"},
      {"(1 if a else 2) if b else 3", "(1 if a else 2) if b else 3"},
      {"1 if a else (2 if b else 3)", "1 if a else 2 if b else 3"},
      {"[x for x in (L if t else M) if (x if t else 0)]", "[x for x in (L if t else M) if (x if t else 0)]"},
      {"(a + b)[0]", "(a + b)[0]"},
      {"[1,2,][0]", "[1, 2][0]"},
      {"max( a,b )", "max(a, b)"},
      {"0x10 + 1_000 + .5 + 1e309 + 1e-5", "16 + 1000 + 0.5 + 1e309 + 1e-05"},
      {"'it\\'s' + \"x\"", "\"it's\" + 'x'"},
      {"True or False", "True or False"},
      {"a | b ^ c & d << 1", "a | b ^ c & d << 1"},
      {"((a | b) ^ c) & d", "((a | b) ^ c) & d"},
  };
  for (const auto& [text, canonical] : cases) {
    const Expression e = Expression::parse(text);
    EXPECT_EQ(e.to_string(), canonical) << text;
    EXPECT_EQ(Expression::parse(e.to_string()).to_string(), canonical) << text;
    EXPECT_EQ(e.text(), text);
  }
}

TEST(ExpressionSharing, CopiesAndThreadsEvaluateTheSameTree) {
  const Expression e = Expression::parse("[x * k for x in range(100) if x % 3 == 0][-1]");
  const Expression copy = e;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.text(), e.text());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 1; k <= 4; ++k) {
    threads.emplace_back([&, k] {
      MapEnv m;
      m.set("k", k);
      for (int r = 0; r < 200; ++r) {
        if (copy.eval(m) != Value(99 * k)) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// ---- T1 tuning-file examples ----------------------------------------------------

TEST(ExpressionT1, TuningFileExamples) {
  MapEnv p;
  p.set("MWG", 64);
  p.set("MDIMC", 8);
  p.set("VWM", 4);
  p.set("TILE", 16);
  p.set("WPT", 4);
  p.set("use_padding", 0);
  p.set("block_size_x", 48);
  p.set("ProblemSize", List{4096, 2048});
  p.set("filter_width", List{3, 5, 7});
  p.set("filter_height", List{1, 3});
  p.set("i", 9);
  EXPECT_EQ(rep("[16, 32, 64]", p), "[16, 32, 64]");
  EXPECT_EQ(rep("[i for i in range(3,35,2)]", p), "[3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33]");
  EXPECT_EQ(rep("[2**i for i in range(6)]", p), "[1, 2, 4, 8, 16, 32]");
  EXPECT_EQ(rep("list(range(1, 9))", p), "[1, 2, 3, 4, 5, 6, 7, 8]");
  EXPECT_EQ(rep("(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG", p), "True");
  EXPECT_EQ(rep("use_padding==0 or (block_size_x % 32 != 0)", p), "True");
  EXPECT_EQ(rep("ProblemSize[0] // (TILE * WPT)", p), "64");
  EXPECT_EQ(rep("2048 * MDIMC // MWG", p), "256");
  EXPECT_EQ(rep("(ProblemSize[0]+max(filter_width)-1) * (ProblemSize[1]+max(filter_height)-1)", p),
            std::to_string((4096 + 7 - 1) * (2048 + 3 - 1)));
  EXPECT_EQ(rep("(i % 7) * 0.5", p), "1.0");
}

// A micro-check, not a timing: one parsed condition over many configurations.
TEST(ExpressionT1, OneTreeOverManyConfigurations) {
  const Expression cond = Expression::parse("(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG and MWG >= MDIMC");
  MapEnv p;
  long valid = 0, expected = 0;
  for (int mwg = 1; mwg <= 128; ++mwg) {
    for (int mdimc = 1; mdimc <= 32; ++mdimc) {
      for (int vwm : {1, 2, 4, 8}) {
        p.set("MWG", mwg);
        p.set("MDIMC", mdimc);
        p.set("VWM", vwm);
        valid += cond.eval(p).as_bool() ? 1 : 0;
        expected += (mwg % (mdimc * vwm) == 0 && mwg >= mdimc) ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(valid, expected);
  EXPECT_GT(valid, 0);
}

// Parse once, evaluate many times: numbers and names are read in place.
TEST(ExpressionT1, ScalarEvaluationAllocatesNothing) {
  const Expression cond = Expression::parse(
      "(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG and (max(MWG, 2) >= ProblemSize[0] // 64 if t else -1.5 < c)");
  MapEnv p = corpus_env();
  p.set("MWG", 64);
  p.set("MDIMC", 8);
  p.set("VWM", 2);
  EXPECT_EQ(cond.eval(p), Value(true));
  const long before = allocations.load();
  long valid = 0;
  for (int k = 0; k < 1000; ++k) valid += cond.eval(p).as_bool() ? 1 : 0;
  EXPECT_EQ(allocations.load() - before, 0);
  EXPECT_EQ(valid, 1000);
  const Value list = Expression::parse("[MWG]").eval(p);  // the counter does count: a list allocates
  EXPECT_GT(allocations.load() - before, 0);
}

// ---- differential corpus (CPython) -------------------------------------------------

namespace {

// One ulp apart (or equal), element by element.
bool within_one_ulp(const Value& ours, const Value& python) {
  if (ours.kind() == Value::Kind::list && python.kind() == Value::Kind::list) {
    const auto& a = ours.as_list();
    const auto& b = python.as_list();
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (!within_one_ulp(a[k], b[k])) return false;
    }
    return true;
  }
  if (ours.kind() == Value::Kind::real && python.kind() == Value::Kind::real) {
    const double x = ours.as_double(), y = python.as_double();
    return x == y || std::nextafter(x, HUGE_VAL) == y || std::nextafter(x, -HUGE_VAL) == y;
  }
  return ours.repr() == python.repr();
}

}  // namespace

TEST(ExpressionCorpus, MatchesCPython) {
  const std::string path = std::string(WSTUNE_TEST_DATA_DIR) + "/expr_corpus.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  const nlohmann::json doc = nlohmann::json::parse(in);
  // The generator's environment is ours.
  const MapEnv e = corpus_env();
  for (const auto& [name, py_repr] : doc.at("env").items()) {
    ASSERT_NE(e.find(name), nullptr) << name;
    EXPECT_EQ(e.find(name)->repr(), py_repr.get<std::string>()) << name;
  }
  MapEnv reprs;  // reads Python reprs of results back (inf and nan are names there)
  reprs.set("inf", HUGE_VAL);
  reprs.set("nan", std::nan(""));
  std::size_t values = 0, errors = 0, by_ulp = 0, failures = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    std::string got;
    std::optional<Value> value;
    try {
      value = Expression::parse(text).eval(e);
      got = value->repr();
    } catch (const ExprError& x) {
      got = "error " + std::string(x.python_error()) + " (" + x.what() + ")";
    }
    bool ok = false;
    if (c.contains("error")) {
      ++errors;
      const std::string cls = c.at("error").get<std::string>();
      ok = got.rfind("error " + cls + " (", 0) == 0;
      if (!ok) got += " but CPython raised " + cls;
    } else {
      ++values;
      const std::string want = c.at("repr").get<std::string>();
      ok = got == want;
      if (!ok && value && c.value("libm", false)) {
        ok = within_one_ulp(*value, Expression::parse(want).eval(reprs));
        by_ulp += ok ? 1 : 0;
      }
      if (!ok) got += " but CPython gave " + want;
    }
    if (!ok && ++failures <= 30) ADD_FAILURE() << text << "\n  -> " << got;
  }
  EXPECT_EQ(failures, 0u);
  EXPECT_GE(values + errors, 3000u);
  std::cout << "[ corpus   ] " << values << " values, " << errors << " errors (CPython "
            << doc.at("python").get<std::string>() << "), " << by_ulp << " within one ulp of libm pow, " << failures
            << " mismatches\n";
}

// ---- properties -------------------------------------------------------------------

namespace {

// An int in [lo, hi), uniform at every size (rapidcheck's inRange narrows
// towards lo at small sizes, which would hide most operators).
rc::Gen<int> uniform(int lo, int hi) {
  return rc::gen::resize(100, rc::gen::inRange(lo, hi));
}

// Random expression text of the whole subset, every operator application in
// parentheses (so the text fixes the tree), over the corpus environment.
rc::Gen<std::string> gen_expr(int depth, bool in_comprehension = false);

rc::Gen<std::string> gen_leaf(bool in_comprehension) {
  std::vector<std::string> leaves = {
      "0",     "1",    "2",     "7",    "-3",       "4096",  "0.5", "2.5",         "1e-05", "1e16",
      "1e309", "True", "False", "'ab'", "\"it's\"", "'\\n'", "a",   "b",           "c",     "e",
      "z",     "t",    "f",     "s",    "L",        "M",     "F",   "ProblemSize", "[]",    "9223372036854775807"};
  if (in_comprehension) leaves.push_back("v");
  return rc::gen::elementOf(leaves);
}

rc::Gen<std::string> gen_expr(int depth, bool in_comprehension) {
  if (depth <= 0) return gen_leaf(in_comprehension);
  const auto sub = [depth, in_comprehension] {
    return rc::gen::lazy([depth, in_comprehension] { return gen_expr(depth - 1, in_comprehension); });
  };
  const auto sub_v = [depth] { return rc::gen::lazy([depth] { return gen_expr(depth - 1, true); }); };
  const auto paren = [](const std::string& s) { return "(" + s + ")"; };
  return rc::gen::oneOf(
      gen_leaf(in_comprehension),
      rc::gen::map(rc::gen::tuple(rc::gen::elementOf(std::vector<std::string>{"-", "+", "~", "not "}), sub()),
                   [paren](const auto& p) { return "(" + std::get<0>(p) + paren(std::get<1>(p)) + ")"; }),
      rc::gen::map(rc::gen::tuple(sub(),
                                  rc::gen::elementOf(std::vector<std::string>{
                                      "+",  "-",  "*",  "/", "//", "%", "**", "&",  "|",      "^",   "<<",
                                      ">>", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "and", "or"}),
                                  sub()),
                   [paren](const auto& p) {
                     return paren(paren(std::get<0>(p)) + " " + std::get<1>(p) + " " + paren(std::get<2>(p)));
                   }),
      rc::gen::map(rc::gen::tuple(sub(), sub(), sub()),
                   [paren](const auto& p) {
                     return paren(paren(std::get<0>(p)) + " if " + paren(std::get<1>(p)) + " else " +
                                  paren(std::get<2>(p)));
                   }),
      rc::gen::map(rc::gen::tuple(sub(), sub()),
                   [paren](const auto& p) { return paren(std::get<0>(p)) + "[" + std::get<1>(p) + "]"; }),
      rc::gen::map(rc::gen::mapcat(uniform(0, 4),
                                   [sub](int n) { return rc::gen::container<std::vector<std::string>>(n, sub()); }),
                   [](const std::vector<std::string>& items) {
                     std::string out = "[";
                     for (const auto& i : items) out += (out.size() > 1 ? ", " : "") + i;
                     return out + "]";
                   }),
      rc::gen::map(
          rc::gen::tuple(
              rc::gen::elementOf(std::vector<std::string>{"abs", "int", "float", "bool", "str", "len", "list", "sum",
                                                          "round", "min", "max", "range"}),
              rc::gen::mapcat(uniform(1, 3),
                              [sub](int n) { return rc::gen::container<std::vector<std::string>>(n, sub()); })),
          [](const auto& p) {
            std::string out = std::get<0>(p) + "(";
            for (std::size_t k = 0; k < std::get<1>(p).size(); ++k) out += (k ? ", " : "") + std::get<1>(p)[k];
            return out + ")";
          }),
      rc::gen::map(rc::gen::tuple(sub_v(), sub(), sub_v()), [paren](const auto& p) {
        return "[" + std::get<0>(p) + " for v in " + paren(std::get<1>(p)) + " if " + paren(std::get<2>(p)) + "]";
      }));
}

// The outcome of evaluating: the repr, or the error's kind and construct.
std::string outcome(const Expression& e) {
  try {
    return e.eval(env()).repr();
  } catch (const ExprError& x) {
    return "error " + std::to_string(static_cast<int>(x.kind())) + " " + x.construct();
  }
}

}  // namespace

RC_GTEST_PROP(ExpressionProperty, CanonicalTextRoundTripsAndEvaluatesTheSame, ()) {
  const std::string text = *gen_expr(4);
  const Expression e = Expression::parse(text);  // fully parenthesised text of the subset always parses
  const std::string canonical = e.to_string();
  const Expression again = Expression::parse(canonical);
  RC_ASSERT(again.to_string() == canonical);
  RC_ASSERT(again.names() == e.names());
  // Same tree, same evaluation: values (by repr, so NaN matches NaN) or the same error.
  const std::string x = outcome(e), y = outcome(again);
  RC_ASSERT(x == y);
}

namespace {

// An integer tree and its value by an independent evaluator written out
// here (Python's floor division and modulo, chained comparisons, and/or
// returning an operand, the lazy conditional), over small leaves so that
// nothing overflows. A comparison gives a bool, which Python adds as 0 or 1.
struct IntTree {
  std::string text;                   // fully parenthesised
  std::optional<std::int64_t> value;  // nullopt: ZeroDivisionError
};

IntTree int_leaf(int v) {
  return IntTree{v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v), v};
}

IntTree int_node(int op, const IntTree& l, const IntTree& r, const IntTree& x, int cmp1, int cmp2) {
  static const char* ops[] = {"+", "-", "*", "//", "%"};
  static const char* cmps[] = {"<", "<=", "==", "!=", ">", ">="};
  const auto compare = [](int c, std::int64_t a, std::int64_t b) {
    switch (c) {
      case 0:
        return a < b;
      case 1:
        return a <= b;
      case 2:
        return a == b;
      case 3:
        return a != b;
      case 4:
        return a > b;
      default:
        return a >= b;
    }
  };
  IntTree out;
  switch (op) {
    case 5:  // unary minus
      out.text = "(-" + l.text + ")";
      if (l.value) out.value = -*l.value;
      return out;
    case 6:  // l < r <= x: r once, x only when l < r holds
      out.text = "(" + l.text + " " + cmps[cmp1] + " " + r.text + " " + cmps[cmp2] + " " + x.text + ")";
      if (!l.value || !r.value) return out;
      if (!compare(cmp1, *l.value, *r.value)) return out.value = 0, out;
      if (!x.value) return out;
      out.value = compare(cmp2, *r.value, *x.value) ? 1 : 0;
      return out;
    case 7:  // and / or return the deciding operand
    case 8:
      out.text = "(" + l.text + (op == 7 ? " and " : " or ") + r.text + ")";
      if (!l.value) return out;
      out.value = ((*l.value != 0) == (op == 7)) ? r.value : l.value;
      return out;
    case 9:  // l if r else x, only the taken branch runs
      out.text = "(" + l.text + " if " + r.text + " else " + x.text + ")";
      if (!r.value) return out;
      out.value = *r.value != 0 ? l.value : x.value;
      return out;
    default:
      break;
  }
  out.text = "(" + l.text + " " + ops[op] + " " + r.text + ")";
  if (!l.value || !r.value) return out;
  const std::int64_t a = *l.value, b = *r.value;
  if ((op == 3 || op == 4) && b == 0) return out;
  std::int64_t q = 0;
  if (op >= 3) {
    q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  }
  switch (op) {
    case 0:
      out.value = a + b;
      break;
    case 1:
      out.value = a - b;
      break;
    case 2:
      out.value = a * b;
      break;
    case 3:
      out.value = q;
      break;
    default:
      out.value = a - q * b;
      break;
  }
  return out;
}

rc::Gen<IntTree> gen_int_tree(int depth) {
  const auto leaf = rc::gen::map(uniform(-9, 10), int_leaf);
  if (depth <= 0) return leaf;
  const auto sub = [depth] { return rc::gen::lazy([depth] { return gen_int_tree(depth - 1); }); };
  return rc::gen::oneOf(leaf,
                        rc::gen::map(rc::gen::tuple(uniform(0, 10), sub(), sub(), sub(), uniform(0, 6), uniform(0, 6)),
                                     [](const auto& p) {
                                       const auto& [op, l, r, x, c1, c2] = p;
                                       return int_node(op, l, r, x, c1, c2);
                                     }));
}

}  // namespace

RC_GTEST_PROP(ExpressionProperty, IntegerTreesMatchAnIndependentEvaluator, ()) {
  const IntTree tree = *gen_int_tree(4);
  for (const std::string& text : {tree.text, Expression::parse(tree.text).to_string()}) {
    if (tree.value) {
      const Value v = Expression::parse(text).eval(env());
      RC_ASSERT(v.is_number());
      RC_ASSERT(v == Value(*tree.value));
    } else {
      const auto e = error_of(text);
      RC_ASSERT(e.has_value());
      RC_ASSERT(e->kind() == Kind::zero_division);
    }
  }
}

RC_GTEST_PROP(ExpressionProperty, ParserNeverCrashesOnRandomBytes, (const std::string& bytes)) {
  try {
    (void)Expression::parse(bytes).eval(env());
  } catch (const ExprError& e) {
    RC_ASSERT(e.offset() <= bytes.size());
  }
}

RC_GTEST_PROP(ExpressionProperty, ParserNeverCrashesOnTokenSoup, ()) {
  // Tokens of Python, in random order: deeper into the parser than random bytes get.
  const auto tokens = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(std::vector<std::string>{
      "(",     ")",      "[", "]",  "{",  "}",  ",",  ":",    ".",   "-",     "+",   "*",    "**",   "/",
      "//",    "%",      "~", "<",  "<=", "==", "!=", "in",   "not", "is",    "and", "or",   "if",   "else",
      "for",   "lambda", "a", "L",  "s",  "v",  "1",  "0",    "2.5", "1e309", "'x'", "True", "None", "max",
      "range", "len",    "=", ":=", "@",  ";",  "\n", "\\\n", "#",   "'",     "0x",  "1_",   " "}));
  std::string text;
  for (const auto& t : tokens) text += t + (*rc::gen::arbitrary<bool>() ? " " : "");
  try {
    (void)Expression::parse(text).eval(env());
  } catch (const ExprError& e) {
    RC_ASSERT(e.offset() <= text.size());
    RC_ASSERT(!e.construct().empty());
  }
}
