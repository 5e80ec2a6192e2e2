#include "wstune/types.hpp"

#include <charconv>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

std::string_view to_string(Priority p) noexcept {
  switch (p) {
    case Priority::x:
      return "x";
    case Priority::y:
      return "y";
    case Priority::none:
      break;
  }
  return "none";
}

std::string to_string(const Extent& e) {
  if (e.dims == 1) return fmt::format("{}", e.x);
  return e.dims == 2 ? fmt::format("{}x{}", e.x, e.y) : fmt::format("{}x{}x{}", e.x, e.y, e.z);
}

std::string to_string(const LocalSize& l) {
  return l ? to_string(*l) : std::string("null");
}

namespace {
[[noreturn]] void bad_local(std::string_view whole, std::string_view what) {
  throw UsageError(
      fmt::format("{} '{}' is not a valid local size: use 'null', X, X,Y or X,Y,Z with "
                  "positive integers (work-items), e.g. --local 16,16",
                  what, whole));
}
std::size_t parse_positive(std::string_view s, std::string_view whole, std::string_view what) {
  std::size_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v == 0) bad_local(whole, what);
  return v;
}
}  // namespace

LocalSize parse_local_size(std::string_view text, std::string_view what) {
  if (text == "null" || text == "NULL" || text == "default") return std::nullopt;
  Extent e;
  std::size_t pos = 0;
  for (unsigned d = 0;; ++d) {
    if (d == 3) bad_local(text, what);
    const auto sep = text.find_first_of(",x", pos);
    e.at(d) = parse_positive(text.substr(pos, sep == std::string_view::npos ? sep : sep - pos), text, what);
    e.dims = d + 1;
    if (sep == std::string_view::npos) return e;
    pos = sep + 1;
  }
}

std::string_view to_string(TrialStatus s) noexcept {
  switch (s) {
    case TrialStatus::correct:
      return "correct";
    case TrialStatus::compile:
      return "compile";
    case TrialStatus::runtime:
      return "runtime";
    case TrialStatus::constraints:
      return "constraints";
    case TrialStatus::correctness:
      return "correctness";
    case TrialStatus::timeout:
      return "timeout";
  }
  return "runtime";
}

TrialStatus parse_trial_status(std::string_view text) {
  for (auto s : {TrialStatus::correct, TrialStatus::compile, TrialStatus::runtime, TrialStatus::constraints,
                 TrialStatus::correctness, TrialStatus::timeout}) {
    if (to_string(s) == text) return s;
  }
  throw UsageError(
      fmt::format("unknown trial status '{}': use correct, compile, runtime, "
                  "constraints, correctness or timeout",
                  text));
}

}  // namespace wstune
