#pragma once
// Internal: the parsed tree of a wstune::expr::Expression and the helpers the
// parser, the evaluator and the printer share. Nodes live in one flat vector
// (indices, not pointers): one allocation per tree, no recursive destructor.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expr/expression.hpp"

namespace wstune::expr::detail {

enum class Op : std::uint8_t {
  constant,       // a = index into Program::constants
  name,           // a = index into Program::identifiers
  list,           // kids = elements
  subscript,      // a = target, b = index
  call,           // aux = Builtin, kids = arguments
  comprehension,  // a = element, b = iterable, c = identifier of the loop variable, kids = filters
  neg,
  pos,
  invert,
  not_,  // a = operand
  add,
  sub,
  mul,
  truediv,
  floordiv,
  mod,
  pow,
  lshift,
  rshift,
  bitand_,
  bitor_,
  bitxor_,  // a, b
  and_,
  or_,      // kids = operands (2 or more)
  compare,  // kids = operands (n >= 2), c = first of n-1 entries in Program::comparisons
  ifelse,   // a = body, b = condition, c = orelse
};

enum class CmpOp : std::uint8_t { eq, ne, lt, le, gt, ge, in, not_in };

enum class Builtin : std::uint8_t { abs, bool_, float_, int_, len, list, max, min, range, round, str, sum };

struct Node {
  Op op = Op::constant;
  std::uint8_t aux = 0;      // the Builtin of a call
  std::uint32_t offset = 0;  // byte offset of the construct (a binary operator's token)
  std::uint32_t a = 0, b = 0, c = 0;
  std::uint32_t first = 0, count = 0;  // range in Program::kids
};

struct Comparison {
  CmpOp op;
  std::uint32_t offset;
};

// Binding strength, loosest first (Python 3 language reference §6.17).
enum Prec : int {
  p_ternary = 1,
  p_or,
  p_and,
  p_not,
  p_compare,
  p_bitor,
  p_bitxor,
  p_bitand,
  p_shift,
  p_arith,
  p_term,
  p_unary,
  p_power,
  p_primary,
  p_atom
};

struct Program {
  std::string text;
  std::vector<Node> nodes;
  std::uint32_t root = 0;
  std::vector<std::uint32_t> kids;
  std::vector<Value> constants;
  std::vector<std::string> identifiers;
  std::vector<Comparison> comparisons;
  std::vector<std::string> free_names;  // sorted, unique
};

// The operator's source spelling: "+", "//", "not in", "-" (unary), ...
std::string_view op_text(Op op) noexcept;
std::string_view cmp_text(CmpOp op) noexcept;
std::string_view builtin_name(Builtin b) noexcept;
int precedence(const Node& n) noexcept;

// Where an error points: the expression text and a byte offset into it.
struct Site {
  std::string_view text;
  std::uint32_t offset = 0;
};

// Throws ExprError with the full message (class, position, excerpt, construct, detail).
[[noreturn]] void fail(ExprError::Kind kind, std::string construct, std::string_view detail, Site site);

// Builds the program of `text` (expr_parse.cpp).
Program parse_program(std::string_view text);
// Evaluates the program (expr_eval.cpp).
Value evaluate(const Program& p, const Env& env);
// Evaluates the subtree of node `node` alone (expr_eval.cpp): constant folding.
Value evaluate_node(const Program& p, std::uint32_t node, const Env& env);
// Canonical source of the program (expression.cpp).
std::string print_program(const Program& p);

}  // namespace wstune::expr::detail
