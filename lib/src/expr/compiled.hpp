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
  struct Range {
    bool known = false;   ///< false: any value
    std::int64_t lo = 0;  ///< smallest value (known)
    std::int64_t hi = 0;  ///< largest value (known)
  };
  /// False when no binding of the slots within `ranges` (one per slot) can
  /// make the expression true, by interval arithmetic over its tree (sound:
  /// a subexpression it cannot bound, such as a float or a division by a
  /// range holding 0, is "any value"); true when it may. Lets the solver
  /// prune a partial combination before the last parameters are bound (a
  /// bound on a sum or a product of parameters, like python-constraint's
  /// MaxSumConstraint and MaxProdConstraint, but for any expression).
  /// Always true when compiled() is false.
  [[nodiscard]] bool may_hold(std::span<const Range> ranges) const;
  /// The expression's text.
  [[nodiscard]] const std::string& text() const noexcept { return expr_.text(); }

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
  [[nodiscard]] Range bound(std::uint32_t node, std::span<const Range> ranges) const;

  Expression expr_;
  std::vector<std::string> slots_;
  std::vector<std::vector<Value>> values_;  // per slot, the interpreter's values
  std::vector<std::vector<Cell>> cells_;    // per slot, the same values as cells
  MapEnv constants_;                        // the non-slot names the expression reads
  std::vector<Instruction> code_;
  std::vector<Cell> consts_;
  std::vector<std::vector<Cell>> lists_;  // constant right operands of `in`
  std::vector<std::int32_t> node_slot_;   // per tree node: its slot (a name), or -1
  std::vector<std::int32_t>
      node_const_;  // per tree node: its folded constant in consts_, -2 none, -1 no slot but not a number
  bool interpreted_ = true;
};

}  // namespace wstune::expr
