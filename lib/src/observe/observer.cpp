// Observation windows and the sensor's update period (observer.hpp).
#include "observe/observer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <optional>
#include <thread>

namespace wstune {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

bool is_energy_mode(const std::string& mode) {
  return mode == "auto" || mode == "on" || mode == "off";
}

EnergyOptions energy_options_of(const std::string& mode) {
  EnergyOptions options;
  options.enabled = mode != "off";
  options.when_needed = mode == "auto";
  return options;
}

std::string default_powercap_root() {
  const char* env = std::getenv("WSTUNE_POWERCAP_ROOT");
  return env && *env ? std::string(env) : std::string("/sys/class/powercap");
}

std::optional<double> read_counter_j(EnergyObserver* o) noexcept {
  if (!o) return std::nullopt;
  try {
    return o->read_j();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> joules_per_round(std::optional<double> before, std::optional<double> after, double rounds) {
  if (!before || !after || !(rounds > 0)) return std::nullopt;
  return (*after - *before) / rounds;
}

double measure_update_period(EnergyObserver& o, std::chrono::milliseconds limit, std::chrono::microseconds poll) {
  const auto t0 = Clock::now();
  double last = o.read_j();
  std::optional<Clock::time_point> first_change;
  while (Clock::now() - t0 < limit) {
    std::this_thread::sleep_for(poll);
    const double e = o.read_j();
    if (e == last) continue;
    last = e;
    const auto now = Clock::now();
    if (first_change) return ms_between(*first_change, now);
    first_change = now;
  }
  return 0;
}

unsigned window_runs(double window_ms, double median_ms) {
  if (!(median_ms > 0) || !(window_ms > 0)) return 1;
  return static_cast<unsigned>(std::clamp(std::ceil(window_ms / median_ms), 1.0, 1e6));
}

double window_ms(const EnergyObserver& o, const EnergyOptions& options) {
  return std::max(options.min_window_ms, options.periods * o.update_period_ms());
}

EnergyMeasurement observe_window(EnergyObserver& o, unsigned runs, double median_ms, const std::function<void()>& run) {
  const auto t0 = Clock::now();
  const double e0 = o.read_j();
  const auto t1 = Clock::now();
  run();
  const auto t2 = Clock::now();
  const double e1 = o.read_j();
  const auto t3 = Clock::now();
  EnergyMeasurement m;
  m.sensor = std::string(o.sensor());
  m.runs = runs;
  m.window_ms = ms_between(t0, t3) - (ms_between(t0, t1) + ms_between(t2, t3)) / 2;  // read midpoint to midpoint
  m.read_ms = ms_between(t0, t1) + ms_between(t2, t3);
  m.power_w = m.window_ms > 0 ? (e1 - e0) / (m.window_ms / 1000) : 0;
  m.energy_j = m.power_w * median_ms / 1000;
  m.resolution_j = o.resolution_j();
  m.update_period_ms = o.update_period_ms();
  return m;
}

}  // namespace wstune
