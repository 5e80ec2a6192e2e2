#include "wstune/split_refine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/multi_device.hpp"

namespace wstune {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double golden = 0.3819660112501051;  // 2 − φ: the golden-section fraction
constexpr double phi = 1.618033988749895;
}  // namespace

// ---- the domain -------------------------------------------------------------------------

std::size_t RefineDomain::step() const {
  return std::lcm(std::max<std::size_t>(1, granularity_first), std::max<std::size_t>(1, granularity_second));
}

std::size_t RefineDomain::offset() const {
  // The smallest u ≡ 0 (mod g0) with u ≡ total (mod g1): at most g1 candidates.
  const std::size_t g0 = std::max<std::size_t>(1, granularity_first);
  const std::size_t g1 = std::max<std::size_t>(1, granularity_second);
  for (std::size_t u = 0; u < step() && u <= total_units; u += g0) {
    if (u % g1 == total_units % g1) return u;
  }
  return total_units + 1;  // none: count() is 0
}

std::size_t RefineDomain::count() const {
  const std::size_t off = offset();
  return off > total_units ? 0 : (total_units - off) / step() + 1;
}

std::size_t RefineDomain::units(std::size_t k) const { return offset() + k * step(); }

std::size_t RefineDomain::nearest(std::size_t units_first) const {
  const std::size_t n = count();
  if (n == 0) {
    throw UsageError(fmt::format("split refinement: no split of {} units aligns with granularities {} and {}; give "
                                 "local sizes dividing the problem, or --local null",
                                 total_units, granularity_first, granularity_second));
  }
  const std::size_t off = offset();
  if (units_first <= off) return 0;
  const std::size_t k = (units_first - off) / step();
  if (k + 1 >= n) return n - 1;
  return units_first - units(k) <= units(k + 1) - units_first ? k : k + 1;
}

bool RefineOutcome::found() const noexcept { return std::isfinite(makespan_ms); }

// ---- the search -------------------------------------------------------------------------

RefineOutcome refine_split_search(const RefineDomain& domain, std::size_t start_units_first,
                                  const std::function<double(std::size_t)>& measure, const RefineOptions& o,
                                  std::optional<std::pair<double, double>> predicted_alone) {
  if (!(o.initial_step > 0 && o.initial_step <= 1)) {
    throw UsageError(fmt::format("split refinement: initial step {} must be in (0, 1]", o.initial_step));
  }
  if (!(o.alone_margin >= 0 && o.alone_margin < 1)) {
    throw UsageError(fmt::format("split refinement: alone margin {} must be in [0, 1)", o.alone_margin));
  }
  if (!(o.endpoint_margin >= 1)) {
    throw UsageError(fmt::format("split refinement: endpoint margin {} must be >= 1", o.endpoint_margin));
  }
  const std::size_t n = domain.count();
  const std::size_t start = domain.nearest(start_units_first);  // throws for an empty domain
  RefineOutcome out;
  out.makespan_ms = inf;
  std::map<std::size_t, std::vector<double>> seen;  // index → every measurement (inf: failed)
  auto value = [&](std::size_t k) { return Samples{seen.at(k)}.median(); };
  std::optional<std::size_t> best;  // index of the smallest value
  auto run = [&](std::size_t k, const char* role) {
    const std::size_t u = domain.units(k);
    double t = inf;
    try {
      t = measure(u);
    } catch (const Error&) {
      t = inf;
    }
    if (!std::isfinite(t) || t < 0) t = inf;
    seen[k].push_back(t);
    out.probes.push_back(RefineProbe{u, t, role});
  };
  auto choose = [&] {
    best.reset();
    for (const auto& [k, v] : seen) {
      if (std::isfinite(value(k)) && (!best || value(k) < value(*best))) best = k;
    }
    out.makespan_ms = best ? value(*best) : inf;
    out.units_first = best ? domain.units(*best) : 0;
  };
  std::size_t distinct = 0;
  auto probe = [&](std::size_t k, const char* role) {
    if (seen.count(k) || distinct >= o.max_points) return;
    ++distinct;
    run(k, role);
    choose();
  };

  probe(start, "start");

  // Single-device endpoints: index 0 is the second device alone when it gets
  // the whole range; index n−1 is the first device alone likewise.
  const bool second_alone = domain.units(0) == 0;
  const bool first_alone = domain.units(n - 1) == domain.total_units && domain.total_units > 0;
  bool want_first = first_alone, want_second = second_alone;
  bool first_before = true;
  if (predicted_alone) {
    const auto [p_first, p_second] = *predicted_alone;
    if (p_first > 0 && p_second > 0) {
      const double least = std::min(p_first, p_second);
      want_first = want_first && p_first <= o.endpoint_margin * least;
      want_second = want_second && p_second <= o.endpoint_margin * least;
      first_before = p_first <= p_second;
    }
  }
  if (first_before) {
    if (want_first) probe(n - 1, "alone");
    if (want_second) probe(0, "alone");
  } else {
    if (want_second) probe(0, "alone");
    if (want_first) probe(n - 1, "alone");
  }
  auto is_alone = [&](std::size_t k) { return (k == 0 && second_alone) || (k == n - 1 && first_alone); };
  auto best_alone = [&]() -> std::optional<std::size_t> {
    std::optional<std::size_t> e;
    for (std::size_t k : {std::size_t{0}, n - 1}) {
      if (is_alone(k) && seen.count(k) && std::isfinite(value(k)) && (!e || value(k) < value(*e))) e = k;
    }
    return e;
  };

  // Bracket and narrow around the best point so far: its nearest measured
  // neighbours on each side form the bracket; an open side is explored by a
  // step growing by φ, a closed one narrowed by a golden-section probe in the
  // larger gap. While a device alone leads, the widest gap between measured
  // splits is bisected instead. Stops when the budget is spent or no gap has
  // an untried split.
  const auto first_step = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::llround(o.initial_step * static_cast<double>(n - 1))));
  while (distinct < o.max_points && best && n > 1) {
    const std::size_t b = *best;
    if (is_alone(b)) {
      // A device alone leads: the valley of a split, if any, may lie beyond
      // the hill the start sits on (bilinear on the H100: start 83 %, both
      // ends 1.8 ms, 50 % 1.2 ms). Bisect the widest gap between measured splits.
      std::size_t x = 0, y = 0;
      for (auto it = seen.begin(); std::next(it) != seen.end(); ++it) {
        if (std::next(it)->first - it->first > y - x) {
          x = it->first;
          y = std::next(it)->first;
        }
      }
      if (y - x >= 2) {
        probe(x + (y - x) / 2, "explore");
        continue;
      }
    }
    const auto right_it = seen.upper_bound(b);
    const auto b_it = seen.find(b);
    const std::optional<std::size_t> c =
        right_it == seen.end() ? std::nullopt : std::optional<std::size_t>(right_it->first);
    const std::optional<std::size_t> a =
        b_it == seen.begin() ? std::nullopt : std::optional<std::size_t>(std::prev(b_it)->first);
    std::optional<std::size_t> next;
    const char* role = "golden";
    auto grow = [&](std::optional<std::size_t> other_side_gap) {
      return other_side_gap ? std::max<std::size_t>(first_step, static_cast<std::size_t>(std::ceil(
                                                                    phi * static_cast<double>(*other_side_gap))))
                            : first_step;
    };
    if (b > 0 && !a) {  // left side open
      const std::size_t s = grow(c ? std::optional<std::size_t>(*c - b) : std::nullopt);
      next = b > s ? b - s : 0;
      role = "bracket";
    } else if (b + 1 < n && !c) {  // right side open
      const std::size_t s = grow(a ? std::optional<std::size_t>(b - *a) : std::nullopt);
      next = std::min(n - 1, b + s);
      role = "bracket";
    } else {
      const std::size_t left_gap = a ? b - *a : 0, right_gap = c ? *c - b : 0;
      if (std::max(left_gap, right_gap) < 2) break;  // no untried split between the neighbours
      if (left_gap >= right_gap) {
        const auto d = static_cast<std::size_t>(std::llround(golden * static_cast<double>(left_gap)));
        next = std::clamp(b - d, *a + 1, b - 1);
      } else {
        const auto d = static_cast<std::size_t>(std::llround(golden * static_cast<double>(right_gap)));
        next = std::clamp(b + d, b + 1, *c - 1);
      }
    }
    if (!next || seen.count(*next)) break;
    probe(*next, role);
  }

  // Confirm a split that beat the best device alone: measure both again,
  // alternating, and compare their medians (one lucky sample must not
  // decide). Only these two remain candidates; near-ties go to the single
  // device: the split must beat it by alone_margin.
  if (const auto e = best_alone(); best && e && !is_alone(*best)) {
    const std::size_t b = *best;
    for (unsigned i = 0; i < o.confirm; ++i) {
      run(b, "confirm");
      run(*e, "confirm");
    }
    const auto alone = best_alone();  // e, or the other endpoint if e fared worse now
    const std::size_t pick = !alone || value(b) < (1 - o.alone_margin) * value(*alone) ? b : *alone;
    out.units_first = domain.units(pick);
    out.makespan_ms = value(pick);
  }
  if (const auto e = best_alone()) out.best_alone_ms = value(*e);
  return out;
}

nlohmann::json to_json(const RefineOutcome& o) {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : o.probes) {
    probes.push_back({{"units_first", p.units_first}, {"makespan_ms", number(p.makespan_ms)}, {"role", p.role}});
  }
  return {{"units_first", o.units_first}, {"makespan_ms", number(o.makespan_ms)},
          {"best_alone_ms", o.best_alone_ms ? nlohmann::json(*o.best_alone_ms) : nlohmann::json(nullptr)},
          {"probes", probes}};
}

RefineOutcome refine_outcome_from_json(const nlohmann::json& j) {
  auto number = [](const nlohmann::json& v) { return v.is_null() ? inf : v.get<double>(); };
  RefineOutcome o;
  o.units_first = j.at("units_first").get<std::size_t>();
  o.makespan_ms = number(j.at("makespan_ms"));
  if (!j.at("best_alone_ms").is_null()) o.best_alone_ms = j.at("best_alone_ms").get<double>();
  for (const auto& p : j.at("probes")) {
    o.probes.push_back(RefineProbe{p.at("units_first").get<std::size_t>(), number(p.at("makespan_ms")),
                                   p.at("role").get<std::string>()});
  }
  return o;
}

// ---- on devices -------------------------------------------------------------------------

std::vector<Block> two_blocks(unsigned dim, std::size_t units_first, std::size_t total) {
  return {Block{dim, 0, units_first}, Block{dim, units_first, total}};
}

SplitRefinement refine_split(MultiDeviceRunner& runner, Calibration& cal, const std::vector<LocalSize>& locals,
                             const TimingOptions& timing, const RefineOptions& options) {
  if (runner.size() != 2 || cal.devices.size() != 2 || locals.size() != 2) {
    throw UsageError(fmt::format("split refinement needs two devices (got {} devices, {} calibrated, {} local "
                                 "sizes); with more, use refine_measured()",
                                 runner.size(), cal.devices.size(), locals.size()));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned dim = cal.dim;
  const std::size_t total = runner.spec().split_units(runner.problem(), dim);
  const RefineDomain domain{total, split_granularity(runner.spec(), dim, locals[0]),
                            split_granularity(runner.spec(), dim, locals[1])};
  SplitRefinement res;
  res.model_blocks = model_blocks(SplitModel::measured, runner, dim, locals, &cal);

  // Solo predictions at the full size decide which endpoints can matter.
  std::pair<double, double> alone{0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    DeviceCalibration solo = cal.devices[i];
    solo.concurrency_scale = 1.0;
    (i == 0 ? alone.first : alone.second) = solo.predict_ms(runner.work_items(dim, total));
  }

  std::map<std::size_t, std::vector<double>> walls;  // units_first → each device's wall median
  std::string last_error;
  auto measure = [&](std::size_t u) {
    const SplitRunResult r = runner.run(two_blocks(dim, u, total), locals, timing);
    res.concurrent_rounds += timing.warmup + r.makespan.size();
    if (!r.ok()) {
      last_error = r.error;
      return inf;
    }
    std::vector<double> w;  // the latest measurement of this split
    for (const auto& s : r.slices) w.push_back(s.wall.size() ? s.wall.median() : 0.0);
    walls[u] = std::move(w);
    return r.makespan.median();
  };
  res.search = refine_split_search(domain, res.model_blocks.at(0).size(), measure, options, alone);
  res.elapsed_ms = ms_since(t0);
  if (!res.search.found()) {
    if (res.search.probes.empty()) {
      res.blocks = res.model_blocks;  // no budget: the model's prediction as it is
      return res;
    }
    throw Error(fmt::format("split refinement of {} {}: no split ran correctly; last failure: {}",
                            runner.spec().name(), runner.problem().text, last_error));
  }
  res.blocks = two_blocks(dim, res.search.units_first, total);
  const auto& w = walls.at(res.search.units_first);
  if (res.blocks[0].size() > 0 && res.blocks[1].size() > 0) {
    for (std::size_t i = 0; i < 2; ++i) {
      observe_concurrent(cal.devices[i], runner.work_items(dim, res.blocks[i].size()), w[i]);
    }
  }
  return res;
}

}  // namespace wstune
