#pragma once
// Small helpers shared by the master's mode files (internal to daemon/master).
#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "wstune/timing.hpp"

namespace wstune::daemon {

using nlohmann::json;
using clock_type = std::chrono::steady_clock;

/// Milliseconds since `t0` (steady clock).
inline double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}
/// The sum of a run's samples (ms).
inline double sum(const Samples& s) {
  double t = 0;
  for (double x : s.ms) t += x;
  return t;
}
/// Receive slices: short enough to notice a stop request quickly.
inline constexpr std::chrono::milliseconds kSlice{100};
/// One receive slice, ending no later than (just after) `deadline`.
inline std::chrono::milliseconds slice_until(clock_type::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
  return std::clamp(left + std::chrono::milliseconds(1), std::chrono::milliseconds(1), kSlice);
}

}  // namespace wstune::daemon
