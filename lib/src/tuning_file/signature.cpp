// Reading a __kernel function's parameters from its source, macros expanded (signature.hpp).
#include "tuning_file/signature.hpp"

#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

namespace wstune::t1 {
namespace {

// The source with comments replaced by blanks (string literals kept).
std::string strip_comments(std::string_view s) {
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"') {  // skip a string literal
      for (++i; i < out.size() && out[i] != '"'; ++i)
        if (out[i] == '\\') ++i;
    } else if (out.compare(i, 2, "//") == 0) {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      const std::size_t end = out.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i)
        if (out[i] != '\n') out[i] = ' ';
      --i;
    }
  }
  return out;
}

bool ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Positions of `word` as a whole word.
std::vector<std::size_t> words(const std::string& s, std::string_view word) {
  std::vector<std::size_t> at;
  for (std::size_t p = s.find(word); p != std::string::npos; p = s.find(word, p + 1)) {
    const bool left = p == 0 || !ident(s[p - 1]);
    const bool right = p + word.size() >= s.size() || !ident(s[p + word.size()]);
    if (left && right) at.push_back(p);
  }
  return at;
}

bool has_word(const std::string& s, std::string_view w) {
  return !words(s, w).empty();
}

std::string collapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Object-like macros: every `#define NAME body` of the source (in every #if
// branch, so a name can have several bodies), continuation lines joined.
std::map<std::string, std::vector<std::string>> object_macros(const std::string& s) {
  std::map<std::string, std::vector<std::string>> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t end = s.find('\n', i);
    while (end != std::string::npos && end > i && s[end - 1] == '\\') end = s.find('\n', end + 1);
    std::string line = s.substr(i, end == std::string::npos ? std::string::npos : end - i);
    i = end == std::string::npos ? s.size() : end + 1;
    std::size_t k = line.find_first_not_of(" \t");
    if (k == std::string::npos || line[k] != '#') continue;
    k = line.find_first_not_of(" \t", k + 1);
    if (k == std::string::npos || line.compare(k, 6, "define") != 0) continue;
    k = line.find_first_not_of(" \t", k + 6);
    if (k == std::string::npos) continue;
    std::size_t e = k;
    while (e < line.size() && ident(line[e])) ++e;
    if (e == k || (e < line.size() && line[e] == '(')) continue;  // function-like macros are not qualifiers
    std::string body = line.substr(e);
    for (char& c : body)
      if (c == '\\' || c == '\n') c = ' ';
    out[line.substr(k, e - k)].push_back(collapse(body));
  }
  return out;
}

// OpenCL C words that name no address space and are no unknown type: what
// a parameter's declaration may hold besides qualifiers, macros and its name.
bool known_word(const std::string& w) {
  static const std::set<std::string> words{"const",
                                           "volatile",
                                           "restrict",
                                           "__restrict",
                                           "unsigned",
                                           "signed",
                                           "char",
                                           "uchar",
                                           "short",
                                           "ushort",
                                           "int",
                                           "uint",
                                           "long",
                                           "ulong",
                                           "float",
                                           "double",
                                           "half",
                                           "bool",
                                           "size_t",
                                           "ptrdiff_t",
                                           "intptr_t",
                                           "uintptr_t",
                                           "void",
                                           "struct",
                                           "union",
                                           "enum",
                                           "__private",
                                           "private",
                                           "__kernel",
                                           "kernel",
                                           "__read_only",
                                           "read_only",
                                           "__write_only",
                                           "write_only",
                                           "__read_write",
                                           "read_write",
                                           "image1d_t",
                                           "image2d_t",
                                           "image3d_t",
                                           "image1d_array_t",
                                           "image2d_array_t",
                                           "image1d_buffer_t",
                                           "sampler_t",
                                           "event_t"};
  if (words.count(w)) return true;
  // Vector types: charN, ucharN, shortN, ushortN, intN, uintN, longN, ulongN, floatN, doubleN, halfN.
  static const std::set<std::string> bases{"char", "uchar", "short", "ushort", "int", "uint",
                                           "long", "ulong", "float", "double", "half"};
  std::size_t d = w.size();
  while (d > 0 && std::isdigit(static_cast<unsigned char>(w[d - 1]))) --d;
  const std::string n = w.substr(d);
  return d < w.size() && bases.count(w.substr(0, d)) && (n == "2" || n == "3" || n == "4" || n == "8" || n == "16");
}

// What the tokens of `text` say about a parameter: its possible address
// spaces, a pointer, unresolved names. `name` (the parameter's own name) is
// skipped; macros expand to the union of their bodies (at most `depth` deep).
void classify(const std::string& text, const std::string& name,
              const std::map<std::string, std::vector<std::string>>& macros, int depth, KernelParameter& p) {
  int brackets = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '[') {
      p.pointer = true;
      ++brackets;
    } else if (c == ']') {
      --brackets;
    } else if (c == '*') {
      p.pointer = true;
    }
    if (!ident(c) || std::isdigit(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    std::size_t e = i;
    while (e < text.size() && ident(text[e])) ++e;
    const std::string w = text.substr(i, e - i);
    i = e;
    if (brackets > 0 || w == name) continue;  // array sizes, the parameter's name
    if (w == "__global" || w == "global")
      p.spaces |= static_cast<std::uint8_t>(AddressSpace::global);
    else if (w == "__constant" || w == "constant")
      p.spaces |= static_cast<std::uint8_t>(AddressSpace::constant);
    else if (w == "__local" || w == "local")
      p.spaces |= static_cast<std::uint8_t>(AddressSpace::local);
    else if (const auto it = macros.find(w); it != macros.end() && depth > 0)
      for (const std::string& body : it->second) classify(body, name, macros, depth - 1, p);
    else if (!known_word(w))
      p.unresolved = true;
  }
}

// The last identifier of a declaration outside brackets: the parameter's name.
std::string parameter_name(const std::string& text) {
  std::string last;
  int brackets = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '[') ++brackets;
    if (text[i] == ']') --brackets;
    if (!ident(text[i]) || std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t e = i;
    while (e < text.size() && ident(text[e])) ++e;
    if (brackets == 0) last = text.substr(i, e - i);
    i = e;
  }
  return last;
}

}  // namespace

std::optional<std::vector<KernelParameter>> kernel_parameters(std::string_view source, std::string_view name,
                                                              std::string* why) {
  const std::string s = strip_comments(source);
  const auto macros = object_macros(s);
  for (const std::size_t at : words(s, name)) {
    // `name (` preceded (within the declaration) by __kernel/kernel and void.
    std::size_t open = at + name.size();
    while (open < s.size() && std::isspace(static_cast<unsigned char>(s[open]))) ++open;
    if (open >= s.size() || s[open] != '(') continue;
    const std::size_t decl = s.find_last_of(";}", at);
    const std::string head =
        s.substr(decl == std::string::npos ? 0 : decl + 1, at - (decl == std::string::npos ? 0 : decl + 1));
    if (!(has_word(head, "__kernel") || has_word(head, "kernel")) || !has_word(head, "void")) continue;
    std::vector<KernelParameter> params;
    int depth = 0;
    std::size_t start = open + 1, i = open + 1;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '(' || c == '[')
        ++depth;
      else if ((c == ')' || c == ']') && depth > 0)
        --depth;
      else if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
        const std::string text = collapse(s.substr(start, i - start));
        if (!text.empty() && text != "void") {
          KernelParameter p;
          p.text = text;
          classify(text, parameter_name(text), macros, 8, p);
          params.push_back(std::move(p));
        }
        start = i + 1;
        if (c == ')') break;
      }
    }
    if (i >= s.size()) break;
    return params;
  }
  if (why) *why = fmt::format("no '__kernel void {}(...)' in the kernel source; check KernelName", name);
  return std::nullopt;
}

}  // namespace wstune::t1
