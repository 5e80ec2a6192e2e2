#include "wstune/split_grid.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

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
    throw UsageError(fmt::format("split grid: {} divisions and {} subdivisions; give at least 1 each (e.g. a 10 % "
                                 "grid is 10 divisions)", divisions, subdivisions));
  }
}

// `center`'s fractions as a composition of `sum` (largest remainders round up).
Composition nearest_composition(const SplitLattice& lattice, const Shares& center, std::size_t sum) {
  const std::size_t n = lattice.size();
  Composition k(n);
  std::vector<std::pair<double, std::size_t>> rest;  // (fractional part, device)
  std::size_t used = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = lattice.total_units
                             ? static_cast<double>(center[i]) * static_cast<double>(sum) /
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

std::vector<SweepPoint> sweep_grid(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                   const TimingOptions& timing, unsigned divisions, unsigned subdivisions) {
  if (locals.size() != runner.size()) {
    throw UsageError(fmt::format("split grid: {} devices but {} local sizes", runner.size(), locals.size()));
  }
  const SplitLattice lattice{runner.spec().split_units(runner.problem(), dim),
                             split_granularities(runner.spec(), dim, locals)};
  std::map<Shares, SweepPoint, std::greater<>> points;
  auto measure = [&](const Shares& u) {
    if (points.count(u)) return;
    const auto blocks = shares_blocks(dim, u);
    const double pct = lattice.total_units ? 100.0 * static_cast<double>(u[0]) / static_cast<double>(lattice.total_units) : 0;
    points.emplace(u, SweepPoint{pct, blocks, runner.run(blocks, locals, timing)});
  };
  auto all = [&] {
    std::vector<SweepPoint> out;
    for (const auto& [u, p] : points) out.push_back(p);
    return out;
  };
  for (const auto& u : simplex_grid(lattice, divisions)) measure(u);
  if (subdivisions > 1) {
    const auto coarse = all();
    if (const SweepPoint* best = best_point(coarse)) {
      for (const auto& u : simplex_grid_around(lattice, block_units(best->blocks), divisions, subdivisions)) measure(u);
    }
  }
  return all();
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
