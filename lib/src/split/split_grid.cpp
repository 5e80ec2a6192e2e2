#include "split/split_grid.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

namespace {

using Composition = std::vector<std::size_t>;

// Calls visit(k) for every k with lo[i] ≤ k[i] ≤ hi[i] and Σ k = sum, in
// lexicographically descending order.
void compositions(std::size_t sum, const Composition& lo, const Composition& hi,
                  const std::function<void(const Composition&)>& visit) {
  const std::size_t n = lo.size();
  std::vector<std::size_t> lo_rest(n + 1, 0), hi_rest(n + 1, 0);  // Σ lo[i..], Σ hi[i..]
  for (std::size_t i = n; i-- > 0;) {
    lo_rest[i] = lo_rest[i + 1] + lo[i];
    hi_rest[i] = hi_rest[i + 1] + hi[i];
  }
  Composition k(n, 0);
  std::function<void(std::size_t, std::size_t)> place = [&](std::size_t i, std::size_t left) {
    if (i == n) {
      if (left == 0) visit(k);
      return;
    }
    for (std::size_t v = std::min(hi[i], left) + 1; v-- > lo[i];) {
      const std::size_t rest = left - v;
      if (rest < lo_rest[i + 1]) continue;
      if (rest > hi_rest[i + 1]) break;  // smaller v leaves even more
      k[i] = v;
      place(i + 1, rest);
    }
  };
  place(0, sum);
}

// The aligned splits of the compositions, each once, in their order.
std::vector<Shares> aligned(const SplitLattice& lattice, std::size_t sum, const Composition& lo,
                            const Composition& hi) {
  std::vector<Shares> out;
  compositions(sum, lo, hi, [&](const Composition& k) {
    Shares u;
    try {
      u = lattice.snap(k);
    } catch (const UsageError&) {
      return;  // these fractions do not align
    }
    if (std::find(out.begin(), out.end(), u) == out.end()) out.push_back(std::move(u));
  });
  return out;
}

void check_grid(const SplitLattice& lattice, unsigned divisions, unsigned subdivisions) {
  if (lattice.size() == 0) throw UsageError("split grid: no devices; name two or more with --devices");
  if (divisions == 0 || subdivisions == 0) {
    throw UsageError(
        fmt::format("split grid: {} divisions and {} subdivisions; give at least 1 each (e.g. a 10 % "
                    "grid is 10 divisions)",
                    divisions, subdivisions));
  }
}

// `center`'s fractions as a composition of `sum` (largest remainders round up).
Composition nearest_composition(const SplitLattice& lattice, const Shares& center, std::size_t sum) {
  const std::size_t n = lattice.size();
  Composition k(n);
  std::vector<std::pair<double, std::size_t>> rest;  // (fractional part, device)
  std::size_t used = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = lattice.total_units ? static_cast<double>(center[i]) * static_cast<double>(sum) /
                                                   static_cast<double>(lattice.total_units)
                                             : 0.0;
    k[i] = static_cast<std::size_t>(std::floor(exact));
    used += k[i];
    rest.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t r = 0; used < sum && r < n; ++r, ++used) ++k[rest[r].second];
  return k;
}

}  // namespace

std::vector<Shares> simplex_grid(const SplitLattice& lattice, unsigned divisions) {
  check_grid(lattice, divisions, 1);
  return aligned(lattice, divisions, Composition(lattice.size(), 0), Composition(lattice.size(), divisions));
}

std::vector<Shares> simplex_grid_around(const SplitLattice& lattice, const Shares& center, unsigned divisions,
                                        unsigned subdivisions) {
  check_grid(lattice, divisions, subdivisions);
  if (center.size() != lattice.size()) {
    throw UsageError(fmt::format("split grid: a center of {} devices for {} devices", center.size(), lattice.size()));
  }
  const std::size_t fine = std::size_t{divisions} * subdivisions;
  const Composition c = nearest_composition(lattice, center, fine);
  Composition lo, hi;
  for (auto v : c) {
    lo.push_back(v > subdivisions ? v - subdivisions : 0);
    hi.push_back(std::min(fine, v + subdivisions));
  }
  return aligned(lattice, fine, lo, hi);
}

namespace {

// The grid walk: each split run once, skipping those that cannot win.
class GridWalk {
 public:
  GridWalk(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals, const TimingOptions& timing,
           const GridOptions& grid)
      : runner_(runner),
        dim_(dim),
        locals_(locals),
        timing_(timing),
        grid_(grid),
        total_(runner.spec().split_units(runner.problem(), dim)),
        seen_(runner.size()) {}

  void measure(const Shares& u) {
    if (points_.count(u)) return;
    const auto blocks = shares_blocks(dim_, u);
    const double pct = total_ ? 100.0 * static_cast<double>(u[0]) / static_cast<double>(total_) : 0;
    SweepPoint p{pct, blocks, {}};
    if (const auto why = hopeless(u)) {
      p.result.status = TrialStatus::timeout;
      p.result.error = *why;
    } else {
      p.result = runner_.run(blocks, locals_, timing_);
      learn(u, p.result);
    }
    points_.emplace(u, std::move(p));
  }
  [[nodiscard]] std::vector<SweepPoint> points() const {
    std::vector<SweepPoint> out;
    for (const auto& [u, p] : points_) out.push_back(p);
    return out;
  }

 private:
  // Why `u` cannot win, if it cannot: some device already took longer than
  // the bound with a slice no larger than u gives it.
  std::optional<std::string> hopeless(const Shares& u) const {
    if (grid_.prune <= 0 || best_ <= 0) return std::nullopt;
    const double factor = device_set(u).size() == 1 ? grid_.prune_alone : grid_.prune;
    for (std::size_t i = 0; i < u.size(); ++i) {
      for (const auto& [units, ms] : seen_[i]) {
        if (units > u[i] || ms <= factor * best_) continue;
        return fmt::format(
            "not run: device {} took {:.4g} ms with {} units (> {} x the best makespan {:.4g} ms); "
            "this split gives it {} units",
            i, ms, units, factor, best_, u[i]);
      }
    }
    return std::nullopt;
  }
  // The best makespan, and each device's own time at its slice.
  void learn(const Shares& u, const SplitRunResult& r) {
    if (!r.ok()) return;
    best_ = best_ > 0 ? std::min(best_, r.makespan.median()) : r.makespan.median();
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (u[i] > 0 && r.slices[i].wall.size()) seen_[i].emplace_back(u[i], r.slices[i].wall.median());
    }
  }

  MultiDeviceRunner& runner_;
  unsigned dim_;
  const std::vector<LocalSize>& locals_;
  const TimingOptions& timing_;
  GridOptions grid_;
  std::size_t total_;
  double best_ = 0;
  std::vector<std::vector<std::pair<std::size_t, double>>> seen_;  // per device: (slice, its time)
  std::map<Shares, SweepPoint, std::greater<>> points_;
};

// The lattice's devices ordered by total PEs, most first (stable).
std::vector<std::size_t> by_pe(MultiDeviceRunner& runner) {
  std::vector<std::size_t> order(runner.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return runner.runner(a).device().info.total_pe() > runner.runner(b).device().info.total_pe();
  });
  return order;
}

}  // namespace

std::vector<SweepPoint> sweep_grid(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                   const TimingOptions& timing, const GridOptions& grid) {
  if (locals.size() != runner.size()) {
    throw UsageError(fmt::format("split grid: {} devices but {} local sizes", runner.size(), locals.size()));
  }
  if (!(grid.prune >= 0) || !(grid.prune_alone >= grid.prune)) {
    throw UsageError(fmt::format("split grid: prune {} must be 0 (off) or positive and prune_alone {} at least that",
                                 grid.prune, grid.prune_alone));
  }
  const SplitLattice lattice{runner.spec().split_units(runner.problem(), dim),
                             split_granularities(runner.spec(), runner.problem(), dim, locals)};
  // Walk the grid of the devices in PE order; measure each split in device order.
  const auto order = by_pe(runner);
  SplitLattice walked{lattice.total_units, {}};
  for (auto i : order) walked.granularity.push_back(lattice.granularity[i]);
  auto device_order = [&](const Shares& w) {
    Shares u(w.size());
    for (std::size_t k = 0; k < w.size(); ++k) u[order[k]] = w[k];
    return u;
  };
  GridWalk walk(runner, dim, locals, timing, grid);
  for (const auto& w : simplex_grid(walked, grid.divisions)) walk.measure(device_order(w));
  if (grid.subdivisions > 1) {
    const auto coarse = walk.points();
    if (const SweepPoint* best = best_point(coarse)) {
      Shares center;
      for (auto i : order) center.push_back(block_units(best->blocks)[i]);
      for (const auto& w : simplex_grid_around(walked, center, grid.divisions, grid.subdivisions)) {
        walk.measure(device_order(w));
      }
    }
  }
  return walk.points();
}

std::string grid_csv(const std::vector<SweepPoint>& grid) {
  const std::size_t n = grid.empty() ? 0 : grid.front().blocks.size();
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += fmt::format("units_{},", i);
  for (std::size_t i = 0; i < n; ++i) out += fmt::format("percent_{},", i);
  out += "devices,status,makespan_median_ms,makespan_min_ms\n";
  for (const auto& p : grid) {
    const Shares u = block_units(p.blocks);
    const double total = static_cast<double>(std::accumulate(u.begin(), u.end(), std::size_t{0}));
    std::string used;
    for (auto i : device_set(u)) used += fmt::format("{}{}", used.empty() ? "" : "+", i);
    for (auto v : u) out += fmt::format("{},", v);
    for (auto v : u) out += fmt::format("{:.2f},", total > 0 ? 100.0 * static_cast<double>(v) / total : 0.0);
    out += fmt::format("{},{},{:.4f},{:.4f}\n", used, to_string(p.result.status), p.result.makespan.median(),
                       p.result.makespan.min());
  }
  return out;
}

}  // namespace wstune
