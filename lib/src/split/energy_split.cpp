// The measured split with an energy or energy-delay objective (energy_split.hpp).
#include "split/energy_split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

namespace {

using WorkItems = std::function<double(std::size_t, std::size_t)>;

// Device i's predicted time for `units` (0 for none).
double slice_ms(const Calibration& cal, const WorkItems& work_items, std::size_t i, std::size_t units) {
  return units == 0 ? 0.0 : cal.devices[i].predict_ms(work_items(i, units));
}

// The largest granularity-aligned slice device i finishes within `bound` ms.
std::size_t most_within(const Calibration& cal, const WorkItems& work_items, std::size_t i, std::size_t total,
                        std::size_t g, double bound) {
  std::size_t lo = 0, hi = total / g;
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (slice_ms(cal, work_items, i, mid * g) <= bound)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo * g;
}

// The devices of `subset` (a bit mask) filled cheapest joule per unit first,
// each up to what it finishes within `bound`; the last one takes the rest
// when the bound leaves some (so every candidate tiles the range), or empty
// when the subset's largest aligned slices cannot cover it.
std::optional<std::vector<std::size_t>> fill(const Calibration& cal, const WorkItems& work_items, std::size_t total,
                                             const std::vector<std::size_t>& gran, unsigned subset, double bound) {
  const std::size_t n = cal.devices.size();
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (subset & (1u << i)) order.push_back(i);
  const auto joules_per_unit = [&](std::size_t i) {
    const auto& d = cal.devices[i];
    const std::size_t all = total / gran[i] * gran[i];
    return all ? (*d.active_w - *d.idle_w) * slice_ms(cal, work_items, i, all) / static_cast<double>(all) : 0.0;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return joules_per_unit(a) < joules_per_unit(b); });
  std::vector<std::size_t> units(n, 0);
  std::size_t left = total;
  for (const std::size_t i : order) {
    const std::size_t take = std::min(most_within(cal, work_items, i, total, gran[i], bound), left / gran[i] * gran[i]);
    units[i] = take;
    left -= take;
  }
  // What the bound leaves (or the range's last partial step) goes to the
  // subset's devices whose granularity divides it, cheapest first.
  for (const std::size_t i : order) {
    if (left == 0) break;
    if (left % gran[i] == 0) {
      units[i] += left;
      left = 0;
    }
  }
  if (left != 0) return std::nullopt;
  return units;
}

std::vector<Block> as_blocks(const std::vector<std::size_t>& units, unsigned dim) {
  std::vector<Block> out;
  std::size_t at = 0;
  for (const std::size_t u : units) {
    out.push_back(Block{dim, at, at + u});
    at += u;
  }
  return out;
}

}  // namespace

std::string_view to_string(SplitObjective o) noexcept {
  switch (o) {
    case SplitObjective::time:
      return "time";
    case SplitObjective::energy:
      return "energy";
    case SplitObjective::edp:
      return "edp";
  }
  return "time";
}

SplitObjective parse_split_objective(std::string_view text, std::string_view what) {
  for (const auto o : {SplitObjective::time, SplitObjective::energy, SplitObjective::edp})
    if (text == to_string(o)) return o;
  throw UsageError(fmt::format("{} '{}': use time (the makespan), energy (the job's joules) or edp (joules x makespan)",
                               what, text));
}

std::optional<double> SplitCost::value(SplitObjective o) const {
  switch (o) {
    case SplitObjective::time:
      return makespan_ms;
    case SplitObjective::energy:
      return joules;
    case SplitObjective::edp:
      return edp();
  }
  return makespan_ms;
}

SplitCost predicted_cost(const Calibration& cal, const std::vector<Block>& blocks, const WorkItems& work_items) {
  SplitCost c;
  std::vector<double> ms;
  for (std::size_t i = 0; i < blocks.size() && i < cal.devices.size(); ++i)
    ms.push_back(slice_ms(cal, work_items, i, blocks[i].size()));
  c.makespan_ms = ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());
  double joules = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const auto& d = cal.devices[i];
    if (!d.active_w || !d.idle_w) return c;
    joules += (*d.active_w * ms[i] + *d.idle_w * (c.makespan_ms - ms[i])) / 1000;
  }
  c.joules = joules;
  return c;
}

std::vector<Block> objective_blocks(const Calibration& cal, std::size_t total, unsigned dim,
                                    const std::vector<std::size_t>& gran, const WorkItems& work_items,
                                    SplitObjective objective) {
  std::vector<Block> fastest = measured_blocks(cal, total, dim, gran, work_items);
  if (objective == SplitObjective::time) return fastest;
  const std::size_t n = cal.devices.size();
  for (const auto& d : cal.devices) {
    if (!d.active_w || !d.idle_w) {
      throw UsageError(
          fmt::format("an {} split needs every device's power, and {} ({}) has none: calibrate it where "
                      "its energy sensor is readable (NVML, RAPL; docs/energy.md), or split by time",
                      to_string(objective), d.device_name, d.device_id));
    }
  }
  if (n > 16) throw UsageError("an energy split considers every subset of the devices: at most 16 devices");
  std::vector<Block> best = fastest;
  double best_value = *predicted_cost(cal, fastest, work_items).value(objective);
  const auto consider = [&](const std::vector<std::size_t>& units) {
    std::vector<Block> b = as_blocks(units, dim);
    const double v = *predicted_cost(cal, b, work_items).value(objective);
    if (v < best_value) {
      best_value = v;
      best = std::move(b);
    }
  };
  const double t_min = predicted_cost(cal, fastest, work_items).makespan_ms;
  double t_max = t_min;
  for (std::size_t i = 0; i < n; ++i) t_max = std::max(t_max, slice_ms(cal, work_items, i, total));
  constexpr int kRungs = 64;
  for (unsigned subset = 1; subset < (1u << n); ++subset) {
    for (int r = 0; r <= kRungs; ++r) {
      const double bound = t_min * std::pow(std::max(1.0, t_max / std::max(t_min, 1e-12)), r / double(kRungs));
      if (const auto units = fill(cal, work_items, total, gran, subset, bound)) consider(*units);
    }
  }
  return best;
}

}  // namespace wstune
