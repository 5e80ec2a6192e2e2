// Hostile JSON input: bounded nesting, bounded messages, linear output.
#include "format/json_input.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

using nlohmann::json;

namespace {

// One level of a JSON path while scanning or walking: a key or an index.
struct Step {
  bool object = false;
  std::size_t index = 0;
  std::string key;
};

// "a.b[3].c…": the first steps of a path, bounded in length.
std::string path_text(const std::vector<Step>& steps) {
  constexpr std::size_t kShown = 8;
  std::string out;
  for (std::size_t i = 0; i < steps.size() && i < kShown; ++i) {
    if (steps[i].object)
      out += (out.empty() ? "" : ".") + bounded(steps[i].key, 32);
    else
      out += fmt::format("[{}]", steps[i].index);
  }
  if (steps.size() > kShown) out += "…";
  return out.empty() ? "the top level" : out;
}

// `frames` are the open arrays and objects, outermost first, each at the
// position that leads to the next; the last one is the container too deep.
[[noreturn]] void too_deep(std::string_view where, std::vector<Step> frames, std::size_t max_depth) {
  if (!frames.empty()) frames.pop_back();
  throw UsageError(
      fmt::format("{}: arrays and objects nested deeper than {} levels at {}; wstune reads at most {} "
                  "levels (the document is damaged or was not written by wstune)",
                  where, max_depth, path_text(frames), max_depth));
}

// Walks the text once without building anything and refuses it when arrays
// and objects nest deeper than max_depth. Lenient about everything else: the
// parser reports malformed text afterwards.
void scan_depth(std::string_view text, std::string_view origin, std::size_t max_depth) {
  std::vector<Step> stack;
  std::vector<bool> want_key;  // per object frame: the next string is a key
  bool in_string = false, escape = false, capturing = false;
  std::string key;
  for (const char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
        if (capturing) {
          stack.back().key = key;
          capturing = false;
        }
        continue;
      }
      if (capturing && key.size() < 40) key += c;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        if (!stack.empty() && stack.back().object && want_key.back()) {
          want_key.back() = false;
          capturing = true;
          key.clear();
        }
        break;
      case '{':
      case '[':
        stack.push_back(Step{c == '{', 0, {}});
        want_key.push_back(c == '{');
        if (stack.size() > max_depth) too_deep(origin, stack, max_depth);
        break;
      case '}':
      case ']':
        if (!stack.empty()) {
          stack.pop_back();
          want_key.pop_back();
        }
        break;
      case ',':
        if (!stack.empty()) {
          if (stack.back().object)
            want_key.back() = true;
          else
            ++stack.back().index;
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace

std::string bounded(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  std::size_t cut = max_chars;
  // Do not split a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}… ({} bytes in all)", text.substr(0, cut), text.size());
}

std::string describe_json(const json& j, std::size_t max_chars) {
  if (j.is_array()) return fmt::format("an array of {} element(s)", j.size());
  if (j.is_object()) return fmt::format("an object with {} key(s)", j.size());
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    // Quote a bounded prefix only: dumping a 100 MB string to cut it is waste.
    const json prefix = std::string(s.substr(0, std::min(s.size(), max_chars + 4)));
    const std::string text = prefix.dump(-1, ' ', false, json::error_handler_t::replace);
    return s.size() > max_chars + 4 ? bounded(text, max_chars) + fmt::format(" (a string of {} bytes)", s.size())
                                    : bounded(text, max_chars);
  }
  return bounded(j.dump(), max_chars);
}

std::uint64_t whole_from_json(const json& j, std::string_view where, std::uint64_t min, std::uint64_t max) {
  const bool negative = j.is_number_integer() && !j.is_number_unsigned() && j.get<std::int64_t>() < 0;
  if (!j.is_number_integer() || negative || j.get<std::uint64_t>() < min || j.get<std::uint64_t>() > max) {
    throw UsageError(fmt::format("{} is {}; give a whole number from {} to {}", where, describe_json(j), min, max));
  }
  return j.get<std::uint64_t>();
}

std::size_t json_depth(const json& j) {
  std::size_t deepest = 0;
  std::vector<std::pair<const json*, std::size_t>> todo{{&j, 0}};
  while (!todo.empty()) {
    auto [v, d] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const auto& child : *v) todo.emplace_back(&child, d + 1);
  }
  return deepest;
}

void check_json_depth(const json& j, std::string_view where, std::size_t max_depth) {
  // Depth-first with the path kept, so the message can say where.
  struct Frame {
    const json* value;
    json::const_iterator next;
  };
  if (!j.is_structured()) return;
  std::vector<Frame> frames{{&j, j.cbegin()}};
  std::vector<Step> path{Step{j.is_object(), 0, {}}};
  if (max_depth == 0) too_deep(where, path, max_depth);
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.next == f.value->cend()) {
      frames.pop_back();
      path.pop_back();
      continue;
    }
    const auto it = f.next++;
    const json& child = *it;
    if (!child.is_structured()) continue;
    // The step that leads to the child, then the child's own frame.
    Step& here = path.back();
    if (f.value->is_object())
      here.key = it.key();
    else
      here.index = static_cast<std::size_t>(std::distance(f.value->cbegin(), it));
    path.push_back(Step{child.is_object(), 0, {}});
    if (path.size() > max_depth) too_deep(where, path, max_depth);
    frames.push_back(Frame{&child, child.cbegin()});
  }
}

json parse_json_input(std::string_view text, std::string_view origin, std::size_t max_depth) {
  // nlohmann's parser ends the text at a NUL byte, so "1\0[[[…" would read
  // as 1 (fuzz target json_input, fuzz/regressions). JSON text never holds one.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw UsageError(
        fmt::format("{} is not valid JSON: byte {} is a NUL byte, which JSON text never holds (a binary "
                    "file, or a damaged copy?)",
                    origin, nul));
  scan_depth(text, origin, max_depth);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw UsageError(fmt::format("{} is not valid JSON (truncated or damaged?) at byte {}: {}", origin, e.byte,
                                 bounded(e.what(), 2 * kMaxQuotedChars)));
  } catch (const json::exception& e) {
    // A number beyond a double (1e309) is out_of_range, not parse_error: it
    // ended wstuned's master (fuzz target jobs, fuzz/regressions).
    throw UsageError(
        fmt::format("{} holds a value wstune cannot read: {}", origin, bounded(e.what(), 2 * kMaxQuotedChars)));
  }
}

namespace {

void outline(std::string& out, const json& j, unsigned levels, unsigned depth) {
  if (levels == 0 || !j.is_structured() || j.empty()) {
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);
    return;
  }
  const bool object = j.is_object();
  out += object ? '{' : '[';
  bool first = true;
  for (auto it = j.cbegin(); it != j.cend(); ++it) {
    out += first ? "\n" : ",\n";
    first = false;
    out.append(depth + 1, ' ');
    if (object) {
      out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace);
      out += ": ";
    }
    outline(out, *it, levels - 1, depth + 1);
  }
  out += '\n';
  out.append(depth, ' ');
  out += object ? '}' : ']';
}

}  // namespace

std::string dump_outline(const json& j, unsigned indent_levels) {
  std::string out;
  outline(out, j, indent_levels, 0);
  return out;
}

}  // namespace wstune
