// CompiledExpression against the interpreter: random expressions over int,
// float and bool slots (overflowing, dividing by zero, comparing ints with
// floats beyond 2^53, short-circuiting, chaining, calling builtins) give the
// interpreter's truth value or its exact error for every binding; the
// T1 conditions of the field compile to the stack program; strings and
// lists fall back to the interpreter.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <string>

#include "expr/compiled.hpp"

using namespace wstune::expr;

namespace {

// The interpreter's answer (truth or error text) and the compiled one's.
struct Answer {
  std::optional<bool> value;
  std::string error;
  bool operator==(const Answer&) const = default;
};

template <class F>
Answer answer(F&& f) {
  Answer a;
  try {
    a.value = f();
  } catch (const ExprError& e) {
    a.error = e.what();
  }
  return a;
}

const std::vector<std::string> kSlots{"A", "B", "C"};

std::vector<std::vector<Value>> slot_values() {
  return {{Value(0), Value(1), Value(-3), Value(7), Value(std::int64_t{1} << 62), Value(9007199254740993)},
          {Value(2), Value(0), Value(-1), Value(64), Value(true)},
          {Value(0.5), Value(-0.0), Value(3.0), Value(1e300), Value(false), Value(2)}};
}

MapEnv constants() {
  MapEnv env;
  env.set("N", Value(5));
  env.set("ProblemSize", Value(std::vector<Value>{Value(64), Value(3)}));
  return env;
}

rc::Gen<std::string> atom() {
  return rc::gen::element<std::string>("A", "B", "C", "N", "ProblemSize[0]", "ProblemSize[1]", "0", "1", "2", "3", "-1",
                                       "7", "2**62", "9007199254740993", "0.5", "2.0", "1e300", "-0.0", "True", "False",
                                       "M");
}

rc::Gen<std::string> expression(int depth) {
  if (depth == 0) return atom();
  const auto sub = [depth] { return *expression(depth - 1); };
  return rc::gen::exec([sub] {
    const int kind = *rc::gen::inRange(0, 12);
    switch (kind) {
      case 0:
      case 1: {
        const auto op = *rc::gen::element<std::string>("+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^");
        return "(" + sub() + " " + op + " " + sub() + ")";
      }
      case 2: {
        const auto op = *rc::gen::element<std::string>("-", "+", "~", "not ");
        return "(" + op + sub() + ")";
      }
      case 3:
      case 4: {
        const auto c1 = *rc::gen::element<std::string>("==", "!=", "<", "<=", ">", ">=");
        std::string s = sub() + " " + c1 + " " + sub();
        if (*rc::gen::arbitrary<bool>()) s += " " + *rc::gen::element<std::string>("<", "==", ">=") + " " + sub();
        return "(" + s + ")";
      }
      case 5:
        return "(" + sub() + (*rc::gen::arbitrary<bool>() ? " and " : " or ") + sub() + ")";
      case 6:
        return "(" + sub() + " if " + sub() + " else " + sub() + ")";
      case 7:
        return std::string(*rc::gen::element<std::string>("min(", "max(")) + sub() + ", " + sub() +
               (*rc::gen::arbitrary<bool>() ? ", " + sub() : std::string()) + ")";
      case 8:
        return *rc::gen::element<std::string>("abs(", "int(", "float(", "round(", "bool(") + sub() + ")";
      case 9:
        return "(" + sub() + (*rc::gen::arbitrary<bool>() ? " in " : " not in ") + "[1, 2, 3.0, True, -0.5])";
      default:
        return sub();
    }
  });
}

}  // namespace

RC_GTEST_PROP(CompiledExpression, GivesTheInterpretersTruthOrErrorForEveryBinding, ()) {
  const std::string text = *expression(*rc::gen::inRange(1, 5));
  const Expression e = Expression::parse(text);
  const auto values = slot_values();
  const MapEnv consts = constants();
  const CompiledExpression c(e, kSlots, values, consts);
  RC_TAG(c.compiled());
  for (std::uint32_t a = 0; a < values[0].size(); ++a)
    for (std::uint32_t b = 0; b < values[1].size(); ++b)
      for (std::uint32_t k = 0; k < values[2].size(); ++k) {
        MapEnv env = consts;
        env.set("A", values[0][a]);
        env.set("B", values[1][b]);
        env.set("C", values[2][k]);
        const Answer want = answer([&] { return e.eval(env).as_bool(); });
        const std::uint32_t idx[3] = {a, b, k};
        const Answer got = answer([&] { return c.test(idx); });
        RC_ASSERT(got == want);
      }
}

RC_GTEST_PROP(CompiledExpression, IntervalBoundsAreCertainWhenTheySayNeverOrAlways, ()) {
  // Ranges of the ints a slot may take: "never" must mean that no binding
  // within them makes the expression true, "always" that every one does.
  const std::string text = *expression(*rc::gen::inRange(1, 5));
  const Expression e = Expression::parse(text);
  const std::vector<std::vector<Value>> values{
      {Value(0), Value(1), Value(-3), Value(7), Value(40), Value(std::int64_t{1} << 62)},
      {Value(2), Value(0), Value(-1), Value(64), Value(true)},
      {Value(5), Value(-2), Value(1), Value(9)}};
  const MapEnv consts = constants();
  const CompiledExpression c(e, kSlots, values, consts);
  std::vector<std::vector<std::uint32_t>> subset(3);
  std::vector<CompiledExpression::Range> ranges(3);
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::uint32_t v = 0; v < values[k].size(); ++v)
      if (*rc::gen::inRange(0, 2) == 0) subset[k].push_back(v);
    if (subset[k].empty()) subset[k].push_back(0);
    for (std::uint32_t v : subset[k]) {
      const std::int64_t x = values[k][v].as_int();
      auto& r = ranges[k];
      r.lo = r.known ? std::min(r.lo, x) : x;
      r.hi = r.known ? std::max(r.hi, x) : x;
      r.known = true;
    }
  }
  const CompiledExpression::Truth t = c.within(ranges);
  RC_TAG(static_cast<int>(t));
  if (t == CompiledExpression::Truth::maybe) return;
  for (std::uint32_t a : subset[0])
    for (std::uint32_t b : subset[1])
      for (std::uint32_t k : subset[2]) {
        const std::uint32_t idx[3] = {a, b, k};
        const Answer got = answer([&] { return c.test(idx); });
        if (t == CompiledExpression::Truth::never)
          RC_ASSERT(got.value != std::optional<bool>(true));
        else
          RC_ASSERT(got.value == std::optional<bool>(true));  // true, and no error
      }
}

TEST(CompiledExpression, IntervalBoundsPruneSumsAndProducts) {
  const MapEnv none;
  const CompiledExpression sum(Expression::parse("A + B + C <= 10"), kSlots,
                               {{Value(1), Value(8)}, {Value(1), Value(8)}, {Value(1), Value(8)}}, none);
  using R = CompiledExpression::Range;
  const R one{1, 1, true, false}, eight{8, 8, true, false}, any{1, 8, true, false};
  EXPECT_FALSE(sum.may_hold(std::vector<R>{eight, eight, any})) << "8 + 8 + at least 1 > 10";
  EXPECT_TRUE(sum.may_hold(std::vector<R>{one, eight, any}));
  const CompiledExpression mem(Expression::parse("(A * 4 + 2) * (B + 2) * (2 + C) * 4 <= 49152"), kSlots,
                               {{Value(1)}, {Value(1)}, {Value(1)}}, none);
  EXPECT_FALSE(mem.may_hold(std::vector<R>{R{1024, 1024, true, false}, R{32, 64, true, false}, any}));
  EXPECT_TRUE(mem.may_hold(std::vector<R>{R{16, 16, true, false}, R{1, 64, true, false}, any}));
}

TEST(CompiledExpression, FieldConditionsCompileToTheStackProgram) {
  // CLBlast's xgemm, BAT's hotspot and dedispersion conditions.
  for (const char* text : {"(MWG // (MDIMC*VWM)) * (MDIMC*VWM) == MWG", "KWG % ((MDIMC * NDIMC) // MDIMA) == 0",
                           "32 <= A * B <= 1024", "B > 1 or A == 0", "A == 0 or ((A * 2 + N) * 4) * B <= 102400",
                           "max(A, B) <= 2 * min(A, B)", "A in [1, 2, 4] and not B"}) {
    const Expression e = Expression::parse(text);
    std::vector<std::string> slots;
    std::vector<std::vector<Value>> values;
    for (const auto& n : e.names()) {
      if (n == "N") continue;
      slots.push_back(n);
      values.push_back({Value(1), Value(2), Value(8)});
    }
    MapEnv consts;
    consts.set("N", Value(4));
    EXPECT_TRUE(CompiledExpression(e, slots, values, consts).compiled()) << text;
  }
}

TEST(CompiledExpression, StringsListsAndUnsupportedCallsUseTheInterpreter) {
  const MapEnv none;
  const CompiledExpression mode(Expression::parse("MODE == 'fast' and A > 1"), {"MODE", "A"},
                                {{Value("fast"), Value("slow")}, {Value(1), Value(2)}}, none);
  EXPECT_FALSE(mode.compiled());
  const std::uint32_t yes[2] = {0, 1}, no[2] = {1, 1};
  EXPECT_TRUE(mode.test(yes));
  EXPECT_FALSE(mode.test(no));
  const CompiledExpression len(Expression::parse("len([A, A]) == 2"), {"A"}, {{Value(1)}}, none);
  EXPECT_FALSE(len.compiled());
  const std::uint32_t zero[1] = {0};
  EXPECT_TRUE(len.test(zero));
  // A name bound nowhere is the interpreter's NameError, when reached.
  const CompiledExpression lazy(Expression::parse("A == 1 or UNKNOWN"), {"A"}, {{Value(1), Value(2)}}, none);
  EXPECT_TRUE(lazy.compiled());
  EXPECT_TRUE(lazy.test(zero));
  const std::uint32_t one[1] = {1};
  EXPECT_THROW((void)lazy.test(one), ExprError);
}

TEST(CompiledExpression, ASlotNamedLikeABuiltinMakesTheCallTheInterpreters) {
  const MapEnv none;
  const CompiledExpression c(Expression::parse("max(A, 2) > 1"), {"A", "max"}, {{Value(1)}, {Value(3)}}, none);
  EXPECT_FALSE(c.compiled());
  const std::uint32_t idx[2] = {0, 0};
  EXPECT_THROW((void)c.test(idx), ExprError);  // 'int' object is not callable
}
