// Lexer and recursive-descent parser of the expression subset. Grammar and
// tokens: Python 3 language reference §2.3-§2.6 (identifiers, keywords,
// literals, operators) and §6 (expressions); every valid Python construct
// outside the subset fails as "unsupported", naming it.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "expr/expr_ops.hpp"
#include "expr/expr_program.hpp"

namespace wstune::expr::detail {

namespace {

using E = ExprError::Kind;

enum class Tok : std::uint8_t { end, newline, integer, real, string, name, op };

struct Token {
  Token() = default;
  Token(Tok t, std::uint32_t at, std::string_view source) : type(t), offset(at), text(source) {}
  Tok type = Tok::end;
  std::uint32_t offset = 0;
  std::string_view text;  // the source bytes
  std::int64_t integer = 0;
  double real = 0;
  std::string string;
};

constexpr std::array<std::string_view, 35> python_keywords = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool is_keyword(std::string_view s) {
  return std::find(python_keywords.begin(), python_keywords.end(), s) != python_keywords.end();
}

// Python's builtin functions other than ours: calling or naming them is
// valid Python outside the subset.
constexpr std::array<std::string_view, 40> other_python_builtins = {
    "all",  "any",    "ascii",     "bin",        "bytearray", "bytes",  "callable", "chr",       "complex", "dict",
    "dir",  "divmod", "enumerate", "eval",       "exec",      "filter", "format",   "frozenset", "getattr", "hasattr",
    "hash", "hex",    "id",        "isinstance", "iter",      "map",    "next",     "oct",       "open",    "ord",
    "pow",  "print",  "repr",      "reversed",   "set",       "slice",  "sorted",   "tuple",     "type",    "zip"};

constexpr std::array<std::string_view, 12> builtin_names = {"abs", "bool", "float", "int",   "len", "list",
                                                            "max", "min",  "range", "round", "str", "sum"};

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}
bool dec_digit(char c) {
  return c >= '0' && c <= '9';
}

// ---- lexer ---------------------------------------------------------------

class Lexer {
 public:
  explicit Lexer(std::string_view text) : t_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skip_blanks();
      if (i_ >= t_.size()) break;
      const char c = t_[i_];
      if (c == '\n' || c == '\r') {
        const auto at = static_cast<std::uint32_t>(i_);
        i_ += (c == '\r' && i_ + 1 < t_.size() && t_[i_ + 1] == '\n') ? 2 : 1;
        if (depth_ == 0 && (out.empty() || out.back().type != Tok::newline)) {
          out.push_back(Token{Tok::newline, at, t_.substr(at, 1)});
        }
      } else if (dec_digit(c) || (c == '.' && i_ + 1 < t_.size() && dec_digit(t_[i_ + 1]))) {
        out.push_back(number());
      } else if (c == '\'' || c == '"') {
        out.push_back(string_literal());
      } else if (ident_start(c)) {
        out.push_back(name());
      } else if (c == '#') {
        error(E::unsupported, i_, "comment", "'#' starts a comment in Python");
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        error(E::unsupported, i_, "non-ASCII character outside a string",
              "names and operators are ASCII here; Python allows Unicode identifiers");
      } else {
        out.push_back(op());
      }
    }
    out.push_back(Token{Tok::end, static_cast<std::uint32_t>(t_.size()), {}});
    return out;
  }

 private:
  [[noreturn]] void error(E kind, std::size_t at, std::string construct, std::string_view detail = {}) const {
    fail(kind, std::move(construct), detail, Site{t_, static_cast<std::uint32_t>(at)});
  }

  void skip_blanks() {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++i_;
      } else if (c == '\\') {
        // Explicit line joining (§2.1.5): a backslash ending a line.
        std::size_t k = i_ + 1;
        if (k < t_.size() && t_[k] == '\r') ++k;
        if (k < t_.size() && t_[k] == '\n') ++k;
        if (k == i_ + 1) error(E::syntax, i_, "backslash", "a backslash outside a string must end a line");
        i_ = k;
      } else {
        return;
      }
    }
  }

  Token name() {
    const std::size_t start = i_;
    while (i_ < t_.size() && ident_char(t_[i_])) ++i_;
    const std::string_view word = t_.substr(start, i_ - start);
    if (i_ < t_.size() && (t_[i_] == '\'' || t_[i_] == '"') && word.size() <= 2) {
      std::string lower(word);
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower == "f" || lower == "fr" || lower == "rf") error(E::unsupported, start, "f-string");
      if (lower == "b" || lower == "br" || lower == "rb") error(E::unsupported, start, "bytes literal");
      if (lower == "r") error(E::unsupported, start, "raw string literal");
      if (lower == "u") error(E::unsupported, start, "u-prefixed string literal", "write the string without the u");
    }
    return Token{Tok::name, static_cast<std::uint32_t>(start), word};
  }

  // digit (["_"] digit)*: at least one digit; an underscore only between digits.
  bool digits(const std::function<bool(char)>& is_digit) {
    if (i_ >= t_.size() || !is_digit(t_[i_])) return false;
    ++i_;
    while (i_ < t_.size()) {
      if (is_digit(t_[i_]))
        ++i_;
      else if (t_[i_] == '_' && i_ + 1 < t_.size() && is_digit(t_[i_ + 1]))
        i_ += 2;
      else
        break;
    }
    return true;
  }

  // A number literal (§2.4.5, §2.4.6): 0x, 0o or 0b digits, else a decimal int or float.
  Token number() {
    if (t_[i_] == '0' && i_ + 1 < t_.size() && std::strchr("xXoObB", t_[i_ + 1]) != nullptr) return prefixed_integer();
    return decimal_number();
  }

  // The literal from `start` up to here, of `type`; refused when a 'j' (complex),
  // a name character or a '.' follows it.
  Token number_token(std::size_t start, Tok type) const {
    if (i_ < t_.size() && (t_[i_] == 'j' || t_[i_] == 'J')) error(E::unsupported, start, "complex literal");
    if (i_ < t_.size() && (ident_char(t_[i_]) || t_[i_] == '.')) {
      error(E::syntax, start, "invalid number literal", fmt::format("'{}' cannot follow a number", t_[i_]));
    }
    return Token{type, static_cast<std::uint32_t>(start), t_.substr(start, i_ - start)};
  }

  // 0x, 0o or 0b, an optional underscore, then digits of that base only.
  Token prefixed_integer() {
    const std::size_t start = i_;
    const char tag = static_cast<char>(std::tolower(static_cast<unsigned char>(t_[i_ + 1])));
    const int base = tag == 'x' ? 16 : (tag == 'o' ? 8 : 2);
    const auto is_digit = [base](char c) {
      if (base == 16) return std::isxdigit(static_cast<unsigned char>(c)) != 0;
      return c >= '0' && c < static_cast<char>('0' + base);
    };
    i_ += 2;
    if (i_ < t_.size() && t_[i_] == '_') ++i_;
    const std::string_view kind_name = base == 16 ? "hexadecimal" : (base == 8 ? "octal" : "binary");
    if (!digits(is_digit) || (i_ < t_.size() && dec_digit(t_[i_]))) {
      error(E::syntax, start, fmt::format("invalid {} literal", kind_name));
    }
    Token tok = number_token(start, Tok::integer);
    tok.integer = prefixed_value(tok.text.substr(2), base, start);
    return tok;
  }

  // The value of a prefixed literal's digits (underscores skipped) in `base`; refused beyond int64.
  std::int64_t prefixed_value(std::string_view digits_text, int base, std::size_t start) const {
    std::uint64_t v = 0;
    for (const char c : digits_text) {
      if (c == '_') continue;
      const int d = dec_digit(c) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
      if (v > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - static_cast<std::uint64_t>(d)) /
                  static_cast<std::uint64_t>(base)) {
        error(E::int_overflow, start, "integer literal beyond int64", "ints are 64-bit here");
      }
      v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
    }
    return static_cast<std::int64_t>(v);
  }

  // digits, then a '.' and digits, then e, a sign and digits: a float when it
  // has the point or the exponent, else an int.
  Token decimal_number() {
    const std::size_t start = i_;
    bool is_float = false;
    digits(dec_digit);  // the integer part (none in .5)
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      is_float = true;
      digits(dec_digit);
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits(dec_digit)) error(E::syntax, start, "invalid number literal", "an exponent needs digits");
      is_float = true;
    }
    Token tok = number_token(start, is_float ? Tok::real : Tok::integer);
    std::string clean;
    for (const char c : tok.text) {
      if (c != '_') clean += c;
    }
    if (is_float)
      tok.real = float_value(clean);
    else
      tok.integer = decimal_value(clean, start);
    return tok;
  }

  // A decimal int's value (`clean`: its digits without underscores); refused
  // with leading zeros (but 0, 00, ...) and beyond int64.
  std::int64_t decimal_value(const std::string& clean, std::size_t start) const {
    if (clean.size() > 1 && clean[0] == '0' && clean.find_first_not_of('0') != std::string::npos) {
      error(E::syntax, start, "leading zeros in a decimal integer literal",
            "Python does not permit them; use 0o for octal");
    }
    std::int64_t v = 0;
    const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), v);
    if (r.ec != std::errc()) error(E::int_overflow, start, "integer literal beyond int64", "ints are 64-bit here");
    return v;
  }

  // A float literal's value (`clean`: without underscores), correctly rounded;
  // beyond double's range Python gives inf on overflow, 0.0 on underflow.
  static double float_value(const std::string& clean) {
    double v = 0;
    const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), v, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) return overflow_or_underflow(clean);
    return v;
  }

  // inf or 0.0 for a float literal beyond double's range, from its decimal
  // magnitude: the leading nonzero digit's place plus the exponent.
  static double overflow_or_underflow(const std::string& clean) {
    const std::size_t e = clean.find_first_of("eE");
    const std::string mantissa = clean.substr(0, e);
    const long long exponent = e != std::string::npos ? literal_exponent(clean, e) : 0;
    const std::size_t dot = std::min(mantissa.find('.'), mantissa.size());
    const std::size_t nonzero = mantissa.find_first_of("123456789");
    const long long magnitude =
        nonzero < dot ? static_cast<long long>(dot - nonzero) : -static_cast<long long>(nonzero - dot - 1);
    return nonzero != std::string::npos && magnitude + exponent > 0 ? HUGE_VAL : 0.0;
  }

  // The exponent after the 'e' at clean[e], clamped to ±100000 (one beyond
  // long long too), so that magnitude + exponent cannot overflow.
  static long long literal_exponent(const std::string& clean, std::size_t e) {
    long long exponent = 0;
    const char* p = clean.data() + e + 1;
    if (*p == '+') ++p;
    if (std::from_chars(p, clean.data() + clean.size(), exponent).ec != std::errc()) {
      exponent = clean[e + 1] == '-' ? -100000 : 100000;
    }
    return std::clamp(exponent, -100000LL, 100000LL);
  }

  // '...' or "..." on one line: its characters (valid UTF-8, no control
  // characters) and the escapes \\ \' \" \n \t.
  Token string_literal() {
    const std::size_t start = i_;
    const char quote = t_[i_];
    if (i_ + 2 < t_.size() && t_[i_ + 1] == quote && t_[i_ + 2] == quote) {
      error(E::unsupported, start, "triple-quoted string");
    }
    ++i_;
    std::string value;
    while (true) {
      if (i_ >= t_.size() || t_[i_] == '\n' || t_[i_] == '\r') {
        error(E::syntax, start, "unterminated string literal");
      }
      if (t_[i_] == quote) break;
      if (t_[i_] == '\\')
        value += escape();
      else
        string_char(value);
    }
    ++i_;
    Token tok{Tok::string, static_cast<std::uint32_t>(start), t_.substr(start, i_ - start)};
    tok.string = std::move(value);
    return tok;
  }

  // The character an escape at the backslash here stands for, stepping over both.
  char escape() {
    const char e = i_ + 1 < t_.size() ? t_[i_ + 1] : '\0';
    if (e != '\\' && e != '\'' && e != '"' && e != 'n' && e != 't') {
      if (e == '\n' || e == '\r') error(E::unsupported, i_, "line continuation inside a string");
      error(E::unsupported, i_, fmt::format("escape sequence '\\{}'", e), "the escapes here are \\\\ \\' \\\" \\n \\t");
    }
    i_ += 2;
    return e == 'n' ? '\n' : (e == 't' ? '\t' : e);
  }

  // Appends the character here (a whole UTF-8 sequence) to `value`, stepping over it.
  void string_char(std::string& value) {
    const char c = t_[i_];
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      error(E::unsupported, i_, "control character in a string literal", "write \\n or \\t");
    }
    const std::size_t n = utf8_char_length(t_, i_);
    if (n == 0) error(E::syntax, i_, "invalid UTF-8 in a string literal");
    value.append(t_.substr(i_, n));
    i_ += n;
  }

  Token op() {
    static constexpr std::array<std::string_view, 47> ops = {
        "**=", "//=", ">>=", "<<=", "...", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", ":=", "->", "+=",
        "-=",  "*=",  "/=",  "%=",  "&=",  "|=", "^=", "@=", "+",  "-",  "*",  "/",  "%",  "&",  "|",  "^",
        "~",   "<",   ">",   "(",   ")",   "[",  "]",  "{",  "}",  ",",  ":",  ".",  ";",  "=",  "@"};
    for (const std::string_view o : ops) {
      if (t_.substr(i_, o.size()) == o) {
        const auto at = static_cast<std::uint32_t>(i_);
        i_ += o.size();
        if (o == "(" || o == "[" || o == "{") ++depth_;
        if ((o == ")" || o == "]" || o == "}") && depth_ > 0) --depth_;
        return Token{Tok::op, at, o};
      }
    }
    const char c = t_[i_];
    if (c == '!') error(E::syntax, i_, "'!'", "Python has no '!' operator; write 'not' or '!='");
    error(E::syntax, i_,
          std::isprint(static_cast<unsigned char>(c))
              ? fmt::format("invalid character '{}'", c)
              : fmt::format("invalid character 0x{:02x}", static_cast<unsigned char>(c)));
  }

  std::string_view t_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

// ---- parser ---------------------------------------------------------------

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens) : text_(text), toks_(std::move(tokens)) {
    prog_.text = std::string(text);
  }

  Program run() {
    skip_newlines();
    if (peek().type == Tok::end) error(E::syntax, peek(), "empty expression");
    prog_.root = expression();
    if (is_op(",")) error(E::unsupported, peek(), "tuple", "a top-level a, b is a tuple in Python");
    skip_newlines();
    if (peek().type != Tok::end) unexpected("the end of the expression");
    collect_names();
    return std::move(prog_);
  }

 private:
  // Nesting of the recursive descent (brackets, unary operators, not, **):
  // bounded before it can exhaust the stack.
  class Nest {
   public:
    Nest(Parser& p, const Token& at) : p_(p) {
      if (++p_.nesting_ > max_depth) {
        p_.error(E::limit, at, "nesting", fmt::format("expressions nest at most {} levels", max_depth));
      }
    }
    ~Nest() { --p_.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  [[noreturn]] void error(E kind, const Token& at, std::string construct, std::string_view detail = {}) const {
    fail(kind, std::move(construct), detail, Site{text_, at.offset});
  }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::end:
        return "end of the expression";
      case Tok::newline:
        return "line break outside brackets";
      case Tok::integer:
      case Tok::real:
        return fmt::format("number {}", t.text);
      case Tok::string:
        return fmt::format("string {}", t.text);
      case Tok::name:
        return is_keyword(t.text) ? fmt::format("keyword '{}'", t.text) : fmt::format("name '{}'", t.text);
      case Tok::op:
        break;
    }
    if (t.text == "=") return "assignment '='";
    if (t.text.size() >= 2 && t.text.back() == '=' && t.text != "==" && t.text != "!=" && t.text != "<=" &&
        t.text != ">=") {
      return fmt::format("augmented assignment '{}'", t.text);
    }
    if (t.text == ";") return "';' (statements)";
    return fmt::format("'{}'", t.text);
  }

  [[noreturn]] void unexpected(std::string_view expected) const {
    const Token& t = peek();
    if (t.type == Tok::name && t.text == "is") {
      error(E::unsupported, t, "'is' comparison", "compare values with == and !=");
    }
    if (t.type == Tok::op && t.text == ":=") error(E::unsupported, t, "assignment expression ':='");
    if (t.type == Tok::op && t.text == "@") error(E::unsupported, t, "matrix multiplication '@'");
    if (t.type == Tok::op && t.text == ".") error(E::unsupported, t, "attribute access");
    if (t.type == Tok::name &&
        (t.text == "import" || t.text == "yield" || t.text == "await" || t.text == "del" || t.text == "assert" ||
         t.text == "return" || t.text == "raise" || t.text == "pass" || t.text == "global" || t.text == "nonlocal" ||
         t.text == "def" || t.text == "class" || t.text == "while" || t.text == "with" || t.text == "try")) {
      error(E::syntax, t, fmt::format("'{}'", t.text), "a statement keyword: expressions only");
    }
    error(E::syntax, t, "unexpected " + describe(t), fmt::format("expected {}", expected));
  }

  const Token& peek(std::size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is_op(std::string_view s, std::size_t k = 0) const { return peek(k).type == Tok::op && peek(k).text == s; }
  bool is_kw(std::string_view s, std::size_t k = 0) const { return peek(k).type == Tok::name && peek(k).text == s; }
  void expect_op(std::string_view s, std::string_view what) {
    if (!is_op(s)) unexpected(what);
    next();
  }
  void skip_newlines() {
    while (peek().type == Tok::newline) next();
  }

  // Adds a node whose children are `children` (plus kids[first, first+count)).
  std::uint32_t add(Node n, std::initializer_list<std::uint32_t> children) {
    std::size_t d = 0;
    for (const std::uint32_t c : children) d = std::max(d, depth_[c]);
    for (std::uint32_t k = n.first; k < n.first + n.count; ++k) d = std::max(d, depth_[prog_.kids[k]]);
    if (d + 1 > max_depth) {
      fail(E::limit, "nesting", fmt::format("expressions nest at most {} levels", max_depth), Site{text_, n.offset});
    }
    prog_.nodes.push_back(n);
    depth_.push_back(d + 1);
    return static_cast<std::uint32_t>(prog_.nodes.size() - 1);
  }
  std::uint32_t add_kids(Node n, const std::vector<std::uint32_t>& kids,
                         std::initializer_list<std::uint32_t> children = {}) {
    n.first = static_cast<std::uint32_t>(prog_.kids.size());
    n.count = static_cast<std::uint32_t>(kids.size());
    prog_.kids.insert(prog_.kids.end(), kids.begin(), kids.end());
    return add(n, children);
  }
  std::uint32_t identifier(std::string_view s) {
    const auto [it, fresh] = ids_.try_emplace(std::string(s), static_cast<std::uint32_t>(prog_.identifiers.size()));
    if (fresh) prog_.identifiers.emplace_back(s);
    return it->second;
  }
  // Builds the Value in place (moving a Value trips GCC 12's -Wmaybe-uninitialized).
  template <class T>
  std::uint32_t constant(T&& raw, std::uint32_t offset) {
    prog_.constants.emplace_back(std::forward<T>(raw));
    return add(Node{Op::constant, 0, offset, static_cast<std::uint32_t>(prog_.constants.size() - 1)}, {});
  }

  // expression: disjunction ['if' disjunction 'else' expression]
  std::uint32_t expression() {
    const Nest nest(*this, peek());
    if (is_kw("lambda")) error(E::unsupported, peek(), "lambda");
    if (is_kw("yield")) error(E::syntax, peek(), "'yield'", "a statement keyword: expressions only");
    const std::uint32_t body = disjunction();
    if (is_op(":=")) error(E::unsupported, peek(), "assignment expression ':='");
    if (!is_kw("if")) return body;
    const std::uint32_t at = next().offset;
    const std::uint32_t cond = disjunction();
    if (!is_kw("else")) unexpected("'else' of the conditional expression");
    next();
    const std::uint32_t orelse = expression();
    return add(Node{Op::ifelse, 0, at, body, cond, orelse}, {body, cond, orelse});
  }

  std::uint32_t bool_chain(Op op, std::string_view keyword, std::uint32_t (Parser::*operand)()) {
    const std::uint32_t first = (this->*operand)();
    if (!is_kw(keyword)) return first;
    const std::uint32_t at = peek().offset;
    std::vector<std::uint32_t> operands{first};
    while (is_kw(keyword)) {
      next();
      operands.push_back((this->*operand)());
    }
    return add_kids(Node{op, 0, at}, operands);
  }
  std::uint32_t disjunction() { return bool_chain(Op::or_, "or", &Parser::conjunction); }
  std::uint32_t conjunction() { return bool_chain(Op::and_, "and", &Parser::inversion); }

  std::uint32_t inversion() {
    if (!is_kw("not")) return comparison();
    const Nest nest(*this, peek());
    const std::uint32_t at = next().offset;
    const std::uint32_t operand = inversion();
    return add(Node{Op::not_, 0, at, operand}, {operand});
  }

  bool comparison_op(CmpOp& op) const {
    const Token& t = peek();
    if (t.type == Tok::name) {
      if (t.text == "in") return op = CmpOp::in, true;
      if (t.text == "not" && is_kw("in", 1)) return op = CmpOp::not_in, true;
      if (t.text == "is") error(E::unsupported, t, "'is' comparison", "compare values with == and !=");
      return false;
    }
    if (t.type != Tok::op) return false;
    static constexpr std::array<std::pair<std::string_view, CmpOp>, 6> table = {{{"==", CmpOp::eq},
                                                                                 {"!=", CmpOp::ne},
                                                                                 {"<", CmpOp::lt},
                                                                                 {"<=", CmpOp::le},
                                                                                 {">", CmpOp::gt},
                                                                                 {">=", CmpOp::ge}}};
    for (const auto& [text, o] : table) {
      if (t.text == text) return op = o, true;
    }
    return false;
  }

  std::uint32_t comparison() {
    const std::uint32_t first = binary(p_bitor);
    CmpOp op{};
    if (!comparison_op(op)) {
      if (is_kw("not")) unexpected("'in' after 'not'");
      return first;
    }
    std::vector<std::uint32_t> operands{first};
    std::vector<Comparison> ops;  // appended at the end: operands may hold comparisons of their own
    while (comparison_op(op)) {
      ops.push_back(Comparison{op, peek().offset});
      next();
      if (op == CmpOp::not_in) next();
      operands.push_back(binary(p_bitor));
    }
    if (is_kw("not")) unexpected("'in' after 'not'");
    const auto first_cmp = static_cast<std::uint32_t>(prog_.comparisons.size());
    prog_.comparisons.insert(prog_.comparisons.end(), ops.begin(), ops.end());
    return add_kids(Node{Op::compare, 0, prog_.nodes[first].offset, 0, 0, first_cmp}, operands);
  }

  static bool binary_op(const Token& t, Op& op, int& prec) {
    if (t.type != Tok::op) return false;
    static constexpr std::array<std::tuple<std::string_view, Op, int>, 13> table = {{
        {"|", Op::bitor_, p_bitor},
        {"^", Op::bitxor_, p_bitxor},
        {"&", Op::bitand_, p_bitand},
        {"<<", Op::lshift, p_shift},
        {">>", Op::rshift, p_shift},
        {"+", Op::add, p_arith},
        {"-", Op::sub, p_arith},
        {"*", Op::mul, p_term},
        {"/", Op::truediv, p_term},
        {"//", Op::floordiv, p_term},
        {"%", Op::mod, p_term},
        {"@", Op::mul, p_term},
        {"**", Op::pow, p_power},
    }};
    for (const auto& [text, o, p] : table) {
      if (t.text == text) {
        op = o;
        prec = p;
        return p != p_power;  // ** is parsed by power()
      }
    }
    return false;
  }

  // Left-associative binary operators from `min_prec` up (precedence climbing).
  std::uint32_t binary(int min_prec) {
    std::uint32_t lhs = unary();
    Op op{};
    int prec = 0;
    while (binary_op(peek(), op, prec) && prec >= min_prec) {
      if (peek().text == "@") error(E::unsupported, peek(), "matrix multiplication '@'");
      const std::uint32_t at = next().offset;
      const std::uint32_t rhs = binary(prec + 1);
      lhs = add(Node{op, 0, at, lhs, rhs}, {lhs, rhs});
    }
    return lhs;
  }

  std::uint32_t unary() {
    Op op{};
    if (is_op("-"))
      op = Op::neg;
    else if (is_op("+"))
      op = Op::pos;
    else if (is_op("~"))
      op = Op::invert;
    else
      return power();
    const Nest nest(*this, peek());
    const std::uint32_t at = next().offset;
    const std::uint32_t operand = unary();
    return add(Node{op, 0, at, operand}, {operand});
  }

  // power: primary ['**' unary] (right-associative, binds tighter than a unary operator on its left)
  std::uint32_t power() {
    const std::uint32_t base = primary();
    if (!is_op("**")) return base;
    const Nest nest(*this, peek());
    const std::uint32_t at = next().offset;
    const std::uint32_t exponent = unary();
    return add(Node{Op::pow, 0, at, base, exponent}, {base, exponent});
  }

  std::uint32_t primary() {
    std::uint32_t node = atom();
    while (true) {
      if (is_op("[")) {
        const Token& open = next();
        if (is_op(":")) error(E::unsupported, peek(), "slice");
        if (is_op("*")) error(E::unsupported, peek(), "starred expression");
        const std::uint32_t index = expression();
        if (is_op(":")) error(E::unsupported, peek(), "slice");
        if (is_op(",")) error(E::unsupported, peek(), "tuple index");
        expect_op("]", "']' closing the subscript");
        node = add(Node{Op::subscript, 0, open.offset, node, index}, {node, index});
      } else if (is_op("(")) {
        node = call(node);
      } else if (is_op(".")) {
        error(E::unsupported, peek(), "attribute access");
      } else {
        return node;
      }
    }
  }

  std::uint32_t call(std::uint32_t callee) {
    const Node& f = prog_.nodes[callee];
    if (f.op != Op::name) error(E::unsupported, peek(), "call of a computed value", "only builtins can be called");
    const std::string_view name = prog_.identifiers[f.a];
    const auto it = std::find(builtin_names.begin(), builtin_names.end(), name);
    const Token at{Tok::name, f.offset, name};
    if (it == builtin_names.end()) {
      const bool python =
          std::find(other_python_builtins.begin(), other_python_builtins.end(), name) != other_python_builtins.end();
      error(E::unsupported, at, fmt::format("call of '{}'", name),
            python ? "a Python builtin outside the subset" : "only the subset's builtins can be called");
    }
    const std::uint32_t offset = f.offset;
    next();  // (
    std::vector<std::uint32_t> args;
    while (!is_op(")")) {
      if (is_op("*") || is_op("**")) error(E::unsupported, peek(), "argument unpacking");
      if (peek().type == Tok::name && is_op("=", 1)) error(E::unsupported, peek(), "keyword argument");
      args.push_back(expression());
      if (is_kw("for")) error(E::unsupported, peek(), "generator expression", "write a list comprehension [...]");
      if (is_op(","))
        next();
      else if (!is_op(")"))
        unexpected("',' or ')' in the call");
    }
    next();  // )
    Node n{Op::call, static_cast<std::uint8_t>(it - builtin_names.begin()), offset};
    return add_kids(n, args);
  }

  std::uint32_t atom() {
    const Token& t = peek();
    switch (t.type) {
      case Tok::integer:
        next();
        return constant(t.integer, t.offset);
      case Tok::real:
        next();
        return constant(t.real, t.offset);
      case Tok::string: {
        next();
        if (peek().type == Tok::string) error(E::unsupported, peek(), "implicit string concatenation", "use +");
        return constant(t.string, t.offset);
      }
      case Tok::name:
        return name_atom();
      case Tok::op:
        break;
      default:
        unexpected("an operand");
    }
    if (t.text == "(") return parenthesized();
    if (t.text == "[") return list_display();
    if (t.text == "{") error(E::unsupported, t, "dict or set display");
    if (t.text == "...") error(E::unsupported, t, "Ellipsis '...'");
    unexpected("an operand (a number, string, name, '(' or '[')");
  }

  std::uint32_t name_atom() {
    const Token& t = next();
    if (t.text == "True" || t.text == "False") return constant(t.text == "True", t.offset);
    if (t.text == "None") error(E::unsupported, t, "None");
    if (t.text == "lambda") error(E::unsupported, t, "lambda");
    if (is_keyword(t.text)) {
      --pos_;
      unexpected("an operand");
    }
    return add(Node{Op::name, 0, t.offset, identifier(t.text)}, {});
  }

  std::uint32_t parenthesized() {
    const Token& open = next();
    if (is_op(")")) error(E::unsupported, open, "tuple", "() is the empty tuple in Python");
    const std::uint32_t inner = expression();
    if (is_kw("for")) error(E::unsupported, peek(), "generator expression", "write a list comprehension [...]");
    if (is_op(",")) error(E::unsupported, peek(), "tuple", "a parenthesised a, b is a tuple in Python");
    expect_op(")", "')'");
    return inner;
  }

  std::uint32_t list_display() {
    const Token& open = next();
    std::vector<std::uint32_t> items;
    while (!is_op("]")) {
      if (is_op("*")) error(E::unsupported, peek(), "starred expression");
      items.push_back(expression());
      if (items.size() == 1 && is_kw("for")) return comprehension(open, items[0]);
      if (is_op(","))
        next();
      else if (!is_op("]"))
        unexpected("',' or ']' in the list");
    }
    next();
    return add_kids(Node{Op::list, 0, open.offset}, items);
  }

  // [element for name in disjunction ('if' disjunction)*]
  std::uint32_t comprehension(const Token& open, std::uint32_t element) {
    next();  // for
    const Token& var = peek();
    if (var.type != Tok::name || is_keyword(var.text)) {
      if (is_op("(") || is_op("[")) error(E::unsupported, var, "tuple target in a comprehension");
      unexpected("a variable name after 'for'");
    }
    next();
    if (is_op(",")) error(E::unsupported, peek(), "tuple target in a comprehension");
    if (!is_kw("in")) unexpected("'in' in the comprehension");
    next();
    const std::uint32_t iterable = disjunction();
    std::vector<std::uint32_t> filters;
    while (is_kw("if")) {
      next();
      filters.push_back(disjunction());
    }
    if (is_kw("for") || is_kw("async")) error(E::unsupported, peek(), "nested 'for' in a comprehension");
    expect_op("]", "']' closing the comprehension");
    Node n{Op::comprehension, 0, open.offset, element, iterable, identifier(var.text)};
    return add_kids(n, filters, {element, iterable});
  }

  // Free names: every name not bound by an enclosing comprehension there.
  void collect_names() {
    std::vector<std::string_view> bound;
    std::vector<std::string> found;
    std::function<void(std::uint32_t)> visit = [&](std::uint32_t i) {
      const Node& n = prog_.nodes[i];
      const auto kids = [&] {
        for (std::uint32_t k = n.first; k < n.first + n.count; ++k) visit(prog_.kids[k]);
      };
      switch (n.op) {
        case Op::constant:
          return;
        case Op::name: {
          const std::string& s = prog_.identifiers[n.a];
          if (std::find(bound.begin(), bound.end(), s) == bound.end()) found.push_back(s);
          return;
        }
        case Op::comprehension:
          visit(n.b);
          bound.push_back(prog_.identifiers[n.c]);
          visit(n.a);
          kids();
          bound.pop_back();
          return;
        case Op::list:
        case Op::call:
        case Op::and_:
        case Op::or_:
        case Op::compare:
          kids();
          return;
        case Op::ifelse:
          visit(n.a);
          visit(n.b);
          visit(n.c);
          return;
        case Op::neg:
        case Op::pos:
        case Op::invert:
        case Op::not_:
          visit(n.a);
          return;
        default:
          visit(n.a);
          visit(n.b);
          return;  // binary operators, subscript
      }
    };
    visit(prog_.root);
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    prog_.free_names = std::move(found);
  }

  std::string_view text_;
  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  std::size_t nesting_ = 0;
  Program prog_;
  std::vector<std::size_t> depth_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

}  // namespace

Program parse_program(std::string_view text) {
  if (text.size() > max_text_bytes) {
    fail(E::limit, "text length",
         fmt::format("{} bytes; expressions are at most {} bytes", text.size(), max_text_bytes),
         Site{text.substr(0, 80), 0});
  }
  return Parser(text, Lexer(text).run()).run();
}

}  // namespace wstune::expr::detail
