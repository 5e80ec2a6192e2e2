#pragma once
/// @file compiled.hpp
/// An Expression compiled once for many evaluations over a fixed set of
/// variables ("slots"), each taking one of a known list of values: a T1
/// Condition over tuning parameters, tested for up to 10^9 combinations by
/// the space solver (space/solver.hpp). The tree becomes a short stack
/// program over 64-bit ints, doubles and bools; names that are not slots
/// (ProblemSize, wstune.Sizes variables) and every subtree that reads no
/// slot are folded to constants at compile time; a slot reads the value its
/// index selects from a table built once. No name is looked up and nothing
/// is allocated per evaluation.
///
/// Python semantics are kept exactly by never guessing: an operation whose
/// result could differ from the interpreter's (an int overflow, a division
/// by zero, an int compared with a float beyond 2^53, a float floor
/// division, ...) stops the program and the interpreter (Expression::eval)
/// evaluates the whole expression for that combination, giving its value or
/// its error. An expression the stack program does not cover (strings,
/// lists other than a constant right operand of `in`, comprehensions over
/// slots, len/str/sum/range/list over slots) is always evaluated by the
/// interpreter, with the slots bound without a name search.
///
/// Sources: Python 3 language reference §6 (the semantics kept), CPython's
/// ceval.c for the shape of a stack machine with short-circuit jumps
/// (JUMP_IF_FALSE_OR_POP); Willemsen et al., arXiv 2509.26253 §3 (compiling
/// Kernel Tuner's restrictions once instead of evaluating them per
/// configuration).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "expr/expression.hpp"

namespace wstune::expr {

/// An Expression compiled against named slots. Immutable after
/// construction; test() and eval() are safe from several threads at once.
class CompiledExpression {
 public:
  /// Compiles `e`. Slot k is named `slots[k]` and takes the values
  /// `slot_values[k]` (a parameter's Values); every other name the
  /// expression reads is looked up once in `constants` now (a name bound
  /// nowhere fails, as in the interpreter, when an evaluation reaches it).
  /// @throws std::invalid_argument when slots and slot_values differ in length
  CompiledExpression(const Expression& e, std::vector<std::string> slots, std::vector<std::vector<Value>> slot_values,
                     const Env& constants);

  /// Python truth of the expression with slot k bound to
  /// slot_values[k][idx[k]] (idx.size() == number of slots, each index in
  /// range).
  /// @throws ExprError as Expression::eval does for the same bindings
  [[nodiscard]] bool test(std::span<const std::uint32_t> idx) const;
  /// The value of the expression with those bindings (the interpreter's).
  /// @throws ExprError as Expression::eval does for the same bindings
  [[nodiscard]] Value eval(std::span<const std::uint32_t> idx) const;
  /// True when the stack program covers the expression (false: every
  /// evaluation runs the interpreter).
  [[nodiscard]] bool compiled() const noexcept { return !interpreted_; }

  /// The ints a slot may still take, as an interval (interval arithmetic:
  /// Moore, "Interval Analysis", 1966); unknown when it may take anything
  /// else (a float, a string) or is not bounded.
  /// Value-initialise (Range{}: any value, no failure); a plain Range is
  /// left uninitialised, so that arrays of them cost nothing to set up.
  struct Range {
    std::int64_t lo;  ///< smallest value (known)
    std::int64_t hi;  ///< largest value (known)
    bool known;       ///< false: any value
    bool fails;       ///< evaluating it may fail (an error) for some binding within
  };
  /// What interval arithmetic says of the expression's truth for every
  /// binding of the slots within `ranges` (one per slot).
  enum class Truth : std::uint8_t {
    never,  ///< no binding within the ranges makes it true
    maybe,  ///< some may, some may not (or the arithmetic cannot tell)
    always  ///< every binding makes it true (and none fails)
  };
  /// The truth of the expression over `ranges`, by interval arithmetic over
  /// its tree (compiled once into a postfix program over intervals). Sound:
  /// a subexpression it cannot bound — a float, a string, a division by a
  /// range holding 0, an overflow — is "any value", and one that may fail
  /// for some binding makes the answer maybe, so "never" and "always" are
  /// certain and no binding within the ranges fails. Lets
  /// the solver drop a partial combination before its last parameters are
  /// bound, and accept or reject ranges of a parameter's values at once (a
  /// bound on a sum or a product of parameters, like python-constraint's
  /// MaxSumConstraint and MaxProdConstraint, but for any expression).
  /// Always maybe when compiled() is false.
  [[nodiscard]] Truth within(std::span<const Range> ranges) const;
  /// within(ranges) != never.
  [[nodiscard]] bool may_hold(std::span<const Range> ranges) const { return within(ranges) != Truth::never; }

  /// A number or bool on the stack program's stack (internal; left
  /// uninitialised by default, so that a stack costs nothing to set up).
  struct Cell {
    /// The Python type.
    enum class Kind : std::uint8_t { integer, real, boolean };
    union {
      std::int64_t i;  ///< integer or boolean (0/1)
      double d;        ///< real
    };
    Kind kind;  ///< which member holds the value
  };
  /// One step of the interval program (internal; compiled_bounds.cpp).
  struct Step {
    std::uint8_t code = 0;    ///< what it does
    std::uint8_t aux = 0;     ///< the operator or builtin
    std::uint32_t arg = 0;    ///< a constant, slot or operand count
    std::uint32_t extra = 0;  ///< a comparison chain's first operator
  };
  /// One instruction of the stack program (internal).
  struct Instruction {
    std::uint8_t code = 0;  ///< what it does (compiled.cpp)
    std::uint8_t aux = 0;   ///< the operator, or an argument count
    std::uint32_t arg = 0;  ///< a constant, slot, list or jump target
  };

 private:
  class Compiler;
  class SlotEnv;
  enum class Outcome : std::uint8_t { no, yes, interpret };
  [[nodiscard]] Outcome run(std::span<const std::uint32_t> idx) const;
  [[nodiscard]] Value interpret(std::span<const std::uint32_t> idx) const;
  void build_bounds();  // compiled_bounds.cpp

  Expression expr_;
  std::vector<std::string> slots_;
  std::vector<std::vector<Value>> values_;  // per slot, the interpreter's values
  std::vector<std::vector<Cell>> cells_;    // per slot, the same values as cells
  MapEnv constants_;                        // the non-slot names the expression reads
  std::vector<Instruction> code_;
  std::vector<Cell> consts_;
  std::vector<std::vector<Cell>> lists_;  // constant right operands of `in`
  // Per tree node: its slot (a name), or -1; its folded int constant in
  // consts_, or -1 (folded, not an int), -2 (not folded), -3 (its folding
  // failed: an error when evaluated).
  std::vector<std::int32_t> node_slot_, node_const_;
  std::vector<Step> bounds_;              // the interval program, postfix, no jumps
  std::vector<Range> bound_consts_;       // its constants
  std::vector<std::uint8_t> bound_cmps_;  // its comparison chains' operators
  std::size_t bounds_depth_ = 0;          // its deepest stack
  bool interpreted_ = true;
};

}  // namespace wstune::expr
