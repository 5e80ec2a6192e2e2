// Expression: parse, evaluate, names, and the canonical printer.
#include "expr/expression.hpp"

#include <cmath>

#include "expr/expr_ops.hpp"
#include "expr/expr_program.hpp"

namespace wstune::expr {

namespace detail {

std::string_view op_text(Op op) noexcept {
  switch (op) {
    case Op::neg:
      return "-";
    case Op::pos:
      return "+";
    case Op::invert:
      return "~";
    case Op::not_:
      return "not";
    case Op::add:
      return "+";
    case Op::sub:
      return "-";
    case Op::mul:
      return "*";
    case Op::truediv:
      return "/";
    case Op::floordiv:
      return "//";
    case Op::mod:
      return "%";
    case Op::pow:
      return "**";
    case Op::lshift:
      return "<<";
    case Op::rshift:
      return ">>";
    case Op::bitand_:
      return "&";
    case Op::bitor_:
      return "|";
    case Op::bitxor_:
      return "^";
    case Op::and_:
      return "and";
    case Op::or_:
      return "or";
    default:
      return "?";
  }
}

std::string_view cmp_text(CmpOp op) noexcept {
  switch (op) {
    case CmpOp::eq:
      return "==";
    case CmpOp::ne:
      return "!=";
    case CmpOp::lt:
      return "<";
    case CmpOp::le:
      return "<=";
    case CmpOp::gt:
      return ">";
    case CmpOp::ge:
      return ">=";
    case CmpOp::in:
      return "in";
    case CmpOp::not_in:
      return "not in";
  }
  return "?";
}

std::string_view builtin_name(Builtin b) noexcept {
  switch (b) {
    case Builtin::abs:
      return "abs";
    case Builtin::bool_:
      return "bool";
    case Builtin::float_:
      return "float";
    case Builtin::int_:
      return "int";
    case Builtin::len:
      return "len";
    case Builtin::list:
      return "list";
    case Builtin::max:
      return "max";
    case Builtin::min:
      return "min";
    case Builtin::range:
      return "range";
    case Builtin::round:
      return "round";
    case Builtin::str:
      return "str";
    case Builtin::sum:
      return "sum";
  }
  return "?";
}

int precedence(const Node& n) noexcept {
  switch (n.op) {
    case Op::constant:
    case Op::name:
    case Op::list:
    case Op::comprehension:
      return p_atom;
    case Op::subscript:
    case Op::call:
      return p_primary;
    case Op::pow:
      return p_power;
    case Op::neg:
    case Op::pos:
    case Op::invert:
      return p_unary;
    case Op::mul:
    case Op::truediv:
    case Op::floordiv:
    case Op::mod:
      return p_term;
    case Op::add:
    case Op::sub:
      return p_arith;
    case Op::lshift:
    case Op::rshift:
      return p_shift;
    case Op::bitand_:
      return p_bitand;
    case Op::bitxor_:
      return p_bitxor;
    case Op::bitor_:
      return p_bitor;
    case Op::compare:
      return p_compare;
    case Op::not_:
      return p_not;
    case Op::and_:
      return p_and;
    case Op::or_:
      return p_or;
    case Op::ifelse:
      return p_ternary;
  }
  return p_atom;
}

namespace {

// Writes the canonical source of a tree: parentheses exactly where the
// precedence and associativity of §6.17 need them.
class Printer {
 public:
  explicit Printer(const Program& p) : p_(p) {}

  std::string run() {
    node(p_.root);
    return std::move(out_);
  }

 private:
  // Prints node i, in parentheses when its precedence is below `min_prec`.
  void child(std::uint32_t i, int min_prec) {
    const bool parens = precedence(p_.nodes[i]) < min_prec;
    if (parens) out_ += '(';
    node(i);
    if (parens) out_ += ')';
  }

  void kids(const Node& n, std::string_view sep, int min_prec) {
    for (std::uint32_t k = 0; k < n.count; ++k) {
      if (k > 0) out_ += sep;
      child(p_.kids[n.first + k], min_prec);
    }
  }

  void constant(const Value& v) {
    // An infinite literal (1e309) has no finite repr that reads back: write one that overflows.
    if (v.kind() == Value::Kind::real && std::isinf(v.as_double()))
      out_ += "1e309";
    else
      out_ += v.repr();
  }

  // Prints node i: its source with the parentheses its children need.
  void node(std::uint32_t i) {
    const Node& n = p_.nodes[i];
    switch (n.op) {
      case Op::constant:
        constant(p_.constants[n.a]);
        return;
      case Op::name:
        out_ += p_.identifiers[n.a];
        return;
      case Op::list:
        enclosed(n, '[', ']');
        return;
      case Op::comprehension:
        comprehension(n);
        return;
      case Op::subscript:
        subscript(n);
        return;
      case Op::call:
        call(n);
        return;
      case Op::neg:
      case Op::pos:
      case Op::invert:
        unary(n, op_text(n.op), p_unary);
        return;
      case Op::not_:
        unary(n, "not ", p_not);
        return;
      case Op::pow:
        power(n);
        return;
      case Op::and_:
      case Op::or_:
        kids(n, n.op == Op::and_ ? " and " : " or ", precedence(n) + 1);
        return;
      case Op::compare:
        comparison(n);
        return;
      case Op::ifelse:
        conditional(n);
        return;
      default:
        binary(n);
        return;  // the left-associative binary operators
    }
  }

  // The kids, comma-separated, between `open` and `close`: a list display or a call's arguments.
  void enclosed(const Node& n, char open, char close) {
    out_ += open;
    kids(n, ", ", p_ternary);
    out_ += close;
  }

  // [element for var in iterable if filter ...]
  void comprehension(const Node& n) {
    out_ += '[';
    child(n.a, p_ternary);
    out_ += " for " + p_.identifiers[n.c] + " in ";
    child(n.b, p_or);
    for (std::uint32_t k = 0; k < n.count; ++k) {
      out_ += " if ";
      child(p_.kids[n.first + k], p_or);
    }
    out_ += ']';
  }

  // target[index]
  void subscript(const Node& n) {
    child(n.a, p_primary);
    out_ += '[';
    child(n.b, p_ternary);
    out_ += ']';
  }

  // builtin(arguments)
  void call(const Node& n) {
    out_ += builtin_name(static_cast<Builtin>(n.aux));
    enclosed(n, '(', ')');
  }

  // A prefix operator ("-", "+", "~" or "not ") and its operand.
  void unary(const Node& n, std::string_view prefix, int operand_prec) {
    out_ += prefix;
    child(n.a, operand_prec);
  }

  // a ** b: right-associative, and tighter than a unary operator on its left.
  void power(const Node& n) {
    child(n.a, p_power + 1);
    out_ += " ** ";
    child(n.b, p_unary);
  }

  // a < b <= c ...: a chain of comparisons, each operand tighter than a comparison.
  void comparison(const Node& n) {
    child(p_.kids[n.first], p_compare + 1);
    for (std::uint32_t k = 1; k < n.count; ++k) {
      out_ += ' ';
      out_ += cmp_text(p_.comparisons[n.c + k - 1].op);
      out_ += ' ';
      child(p_.kids[n.first + k], p_compare + 1);
    }
  }

  // body if condition else orelse: only the orelse may be another conditional unparenthesized.
  void conditional(const Node& n) {
    child(n.a, p_ternary + 1);
    out_ += " if ";
    child(n.b, p_ternary + 1);
    out_ += " else ";
    child(n.c, p_ternary);
  }

  // a OP b for the left-associative binary operators: a right operand of the
  // same precedence gets parentheses.
  void binary(const Node& n) {
    const int prec = precedence(n);
    child(n.a, prec);
    out_ += ' ';
    out_ += op_text(n.op);
    out_ += ' ';
    child(n.b, prec + 1);
  }

  const Program& p_;
  std::string out_;
};

}  // namespace

std::string print_program(const Program& p) {
  return Printer(p).run();
}

}  // namespace detail

Expression Expression::parse(std::string_view text) {
  return Expression(std::make_shared<const detail::Program>(detail::parse_program(text)));
}

Value Expression::eval(const Env& env) const {
  return detail::evaluate(*program_, env);
}

const std::string& Expression::text() const noexcept {
  return program_->text;
}

std::vector<std::string> Expression::names() const {
  return program_->free_names;
}

std::string Expression::to_string() const {
  return detail::print_program(*program_);
}

}  // namespace wstune::expr
