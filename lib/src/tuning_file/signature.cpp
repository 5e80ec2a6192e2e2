// Reading a __kernel function's parameters from its source (signature.hpp).
#include "tuning_file/signature.hpp"

#include <cctype>

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

}  // namespace

std::optional<std::vector<KernelParameter>> kernel_parameters(std::string_view source, std::string_view name,
                                                              std::string* why) {
  const std::string s = strip_comments(source);
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
          if (has_word(text, "__global") || has_word(text, "global"))
            p.space = AddressSpace::global;
          else if (has_word(text, "__constant") || has_word(text, "constant"))
            p.space = AddressSpace::constant;
          else if (has_word(text, "__local") || has_word(text, "local"))
            p.space = AddressSpace::local;
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
