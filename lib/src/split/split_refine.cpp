#include "split/split_refine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "split/multi_device.hpp"
#include "wstune/error.hpp"

namespace wstune {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double golden = 0.3819660112501051;  // 2 − φ: the golden-section fraction
constexpr double phi = 1.618033988749895;
}  // namespace

// ---- the two-device domain ------------------------------------------------

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

std::size_t RefineDomain::units(std::size_t k) const {
  return offset() + k * step();
}

std::size_t RefineDomain::nearest(std::size_t units_first) const {
  const std::size_t n = count();
  if (n == 0) {
    throw UsageError(
        fmt::format("split refinement: no split of {} units aligns with granularities {} and {}; give "
                    "local sizes dividing the problem, or --local null",
                    total_units, granularity_first, granularity_second));
  }
  const std::size_t off = offset();
  if (units_first <= off) return 0;
  const std::size_t k = (units_first - off) / step();
  if (k + 1 >= n) return n - 1;
  return units_first - units(k) <= units(k + 1) - units_first ? k : k + 1;
}

unsigned refine_points(std::size_t devices) noexcept {
  return devices <= 2 ? 8u : 8u + 10u * static_cast<unsigned>(devices - 2);
}

bool RefineOutcome::found() const noexcept {
  return std::isfinite(makespan_ms);
}

// ---- lines through a split ------------------------------------------------------------------

namespace {

// A line of settable splits through a base split, point k of count().
struct Line {
  std::size_t count = 0;
  std::function<std::optional<Shares>(std::size_t k)> at;          // nullopt: k is not settable
  std::function<std::optional<std::size_t>(const Shares&)> index;  // k of a split on the line
};

// Work moved between devices i and j; the others keep their slices.
Line pair_line(const SplitLattice& l, const Shares& base, std::size_t i, std::size_t j) {
  const RefineDomain d{base[i] + base[j], l.granularity[i], l.granularity[j]};
  Line line;
  line.count = d.count();
  line.at = [=](std::size_t k) -> std::optional<Shares> {
    Shares u = base;
    u[i] = d.units(k);
    u[j] = d.total_units - u[i];
    return u;
  };
  line.index = [=](const Shares& u) -> std::optional<std::size_t> {
    for (std::size_t m = 0; m < u.size(); ++m) {
      if (m != i && m != j && u[m] != base[m]) return std::nullopt;
    }
    if (d.count() == 0) return std::nullopt;
    const std::size_t k = d.nearest(u[i]);
    return d.units(k) == u[i] ? std::optional<std::size_t>(k) : std::nullopt;
  };
  return line;
}

// Device j against all others, which keep their proportions of the base
// (equal ones when the base gives them nothing).
Line rest_line(const SplitLattice& l, const Shares& base, std::size_t j) {
  const std::size_t g = std::max<std::size_t>(1, l.granularity[j]);
  std::vector<double> weights;
  std::vector<std::size_t> gran;
  double sum = 0;
  for (std::size_t m = 0; m < base.size(); ++m) {
    if (m == j) continue;
    weights.push_back(static_cast<double>(base[m]));
    gran.push_back(l.granularity[m]);
    sum += weights.back();
  }
  for (auto& w : weights) w = sum > 0 ? w / sum : 1.0 / static_cast<double>(weights.size());
  Line line;
  line.count = l.total_units / g + 1;
  line.at = [=, total = l.total_units](std::size_t k) -> std::optional<Shares> {
    std::vector<Block> rest;
    try {
      rest = align_blocks(weights, total - k * g, 0, gran);
    } catch (const UsageError&) {
      return std::nullopt;  // the others' granularities cannot take this remainder
    }
    Shares u;
    for (std::size_t m = 0, r = 0; m < base.size(); ++m) u.push_back(m == j ? k * g : rest[r++].size());
    return u;
  };
  line.index = [at = line.at, j, g](const Shares& u) -> std::optional<std::size_t> {
    if (u[j] % g != 0 || at(u[j] / g) != u) return std::nullopt;
    return u[j] / g;
  };
  return line;
}

// The segment from `base` towards `target` (real slices, one per device):
// point k at base + k/steps · (target − base), aligned; steps so that one
// step moves no device by more than its granularity.
Line segment_line(const SplitLattice& l, const Shares& base, const std::vector<double>& target) {
  std::vector<double> d;
  std::size_t steps = 1, lead = 0;  // lead: the device moving most
  for (std::size_t i = 0; i < base.size(); ++i) {
    d.push_back(target[i] - static_cast<double>(base[i]));
    const double moves = std::abs(d[i]) / static_cast<double>(std::max<std::size_t>(1, l.granularity[i]));
    steps = std::max(steps, static_cast<std::size_t>(std::ceil(moves)));
    if (std::abs(d[i]) > std::abs(d[lead])) lead = i;
  }
  Line line;
  line.count = steps + 1;
  line.at = [=](std::size_t k) -> std::optional<Shares> {
    if (k == 0) return base;
    Shares x;
    for (std::size_t i = 0; i < base.size(); ++i) {
      const double v = static_cast<double>(base[i]) + d[i] * static_cast<double>(k) / static_cast<double>(steps);
      x.push_back(static_cast<std::size_t>(std::llround(std::max(0.0, v))));
    }
    try {
      return l.snap(x);
    } catch (const UsageError&) {
      return std::nullopt;
    }
  };
  line.index = [at = line.at, base, d, lead, steps](const Shares& u) -> std::optional<std::size_t> {
    if (d[lead] == 0) return u == base ? std::optional<std::size_t>(0) : std::nullopt;
    const double s = (static_cast<double>(u[lead]) - static_cast<double>(base[lead])) / d[lead];
    const auto k = std::llround(s * static_cast<double>(steps));
    if (k < 0 || static_cast<std::size_t>(k) > steps || at(static_cast<std::size_t>(k)) != u) return std::nullopt;
    return static_cast<std::size_t>(k);
  };
  return line;
}

// Where the devices of `u` would finish together if each kept the rate it
// showed there (slice ÷ its time): slices ∝ u_i / t_i over the devices used.
// None when fewer than two devices are used or a time is missing. At a
// fixed point all times are equal.
std::optional<std::vector<double>> balanced(const Shares& u, const std::vector<double>& t, std::size_t total) {
  std::vector<double> rate(u.size(), 0.0);
  double sum = 0;
  std::size_t used = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (u[i] == 0) continue;
    if (!(t[i] > 0) || !std::isfinite(t[i])) return std::nullopt;
    rate[i] = static_cast<double>(u[i]) / t[i];
    sum += rate[i];
    ++used;
  }
  if (used < 2) return std::nullopt;
  for (auto& r : rate) r = r / sum * static_cast<double>(total);
  return rate;
}

// The points of `line` within `half` points of `center`, as a line of its own.
Line window(const Line& line, std::size_t center, std::size_t half) {
  const std::size_t lo = center > half ? center - half : 0;
  const std::size_t hi = std::min(line.count - 1, center + half);
  Line w;
  w.count = hi - lo + 1;
  w.at = [at = line.at, lo](std::size_t k) { return at(lo + k); };
  w.index = [index = line.index, lo, hi](const Shares& u) -> std::optional<std::size_t> {
    const auto k = index(u);
    if (!k || *k < lo || *k > hi) return std::nullopt;
    return *k - lo;
  };
  return w;
}

// The measured points of one line and how the next one is chosen.
struct LineView {
  std::map<std::size_t, double> value;  // k → median makespan (inf: failed or not settable)
  std::size_t count = 0;
  std::size_t first_step = 1;              // first bracketing step (points)
  std::function<bool(std::size_t)> alone;  // point k uses one device

  std::optional<std::size_t> best() const {
    std::optional<std::size_t> b;
    for (const auto& [k, v] : value) {
      if (std::isfinite(v) && (!b || v < value.at(*b))) b = k;
    }
    return b;
  }
  // The middle of the widest gap between measured points, if it has one.
  std::optional<std::size_t> widest_gap_middle() const {
    std::size_t x = 0, y = 0;
    for (auto it = value.begin(); std::next(it) != value.end(); ++it) {
      if (std::next(it)->first - it->first > y - x) {
        x = it->first;
        y = std::next(it)->first;
      }
    }
    return y - x >= 2 ? std::optional<std::size_t>(x + (y - x) / 2) : std::nullopt;
  }
  // A step from b growing by φ over the gap on the other side, if any.
  std::size_t grow(std::optional<std::size_t> other_gap) const {
    if (!other_gap) return first_step;
    return std::max(first_step, static_cast<std::size_t>(std::ceil(phi * static_cast<double>(*other_gap))));
  }
};

struct LineStep {
  std::size_t k = 0;
  const char* role = "golden";
};

// Bracket around the best point b (an open side is explored by a step
// growing by φ) or narrow it (a golden-section probe in the larger gap).
std::optional<LineStep> bracket_or_narrow(const LineView& v, std::size_t b) {
  const auto b_it = v.value.find(b);
  const auto right_it = std::next(b_it);
  const std::optional<std::size_t> c =
      right_it == v.value.end() ? std::nullopt : std::optional<std::size_t>(right_it->first);
  const std::optional<std::size_t> a =
      b_it == v.value.begin() ? std::nullopt : std::optional<std::size_t>(std::prev(b_it)->first);
  if (b > 0 && !a) {  // left side open
    const std::size_t s = v.grow(c ? std::optional<std::size_t>(*c - b) : std::nullopt);
    return LineStep{b > s ? b - s : 0, "bracket"};
  }
  if (b + 1 < v.count && !c) {  // right side open
    const std::size_t s = v.grow(a ? std::optional<std::size_t>(b - *a) : std::nullopt);
    return LineStep{std::min(v.count - 1, b + s), "bracket"};
  }
  const std::size_t left_gap = a ? b - *a : 0, right_gap = c ? *c - b : 0;
  if (std::max(left_gap, right_gap) < 2) return std::nullopt;  // no untried point between the neighbours
  if (left_gap >= right_gap) {
    const auto d = static_cast<std::size_t>(std::llround(golden * static_cast<double>(left_gap)));
    return LineStep{std::clamp(b - d, *a + 1, b - 1), "golden"};
  }
  const auto d = static_cast<std::size_t>(std::llround(golden * static_cast<double>(right_gap)));
  return LineStep{std::clamp(b + d, b + 1, *c - 1), "golden"};
}

// The next point to measure on a line, or none when the line is done. While
// a device alone leads, the widest gap is bisected: the valley of a split
// may lie beyond a hill next to it (bilinear on the H100: start 83 %, both
// ends 1.8 ms, 50 % 1.2 ms).
std::optional<LineStep> next_on_line(const LineView& v) {
  const auto b = v.best();
  if (!b || v.count < 2) return std::nullopt;
  if (v.alone(*b)) {
    if (const auto m = v.widest_gap_middle()) return LineStep{*m, "explore"};
  }
  const auto next = bracket_or_narrow(v, *b);
  if (!next || v.value.count(next->k)) return std::nullopt;
  return next;
}

// ---- the search -----------------------------------------------------------------------------

using Measure = std::function<SplitMeasurement(const Shares&)>;

void require(bool ok, std::string_view what, double v, std::string_view range) {
  if (!ok) throw UsageError(fmt::format("split refinement: {} {} must be {}", what, v, range));
}

void check_options(const RefineOptions& o) {
  require(o.initial_step > 0 && o.initial_step <= 1, "initial step", o.initial_step, "in (0, 1]");
  require(o.alone_margin >= 0 && o.alone_margin < 1, "alone margin", o.alone_margin, "in [0, 1)");
  require(o.subset_margin >= 0 && o.subset_margin < 1, "subset margin", o.subset_margin, "in [0, 1)");
  require(o.endpoint_margin >= 1, "endpoint margin", o.endpoint_margin, ">= 1");
  require(o.step_shrink > 0 && o.step_shrink <= 1, "step shrink", o.step_shrink, "in (0, 1]");
  require(o.balance_tolerance >= 0 && o.balance_tolerance < 1, "balance tolerance", o.balance_tolerance, "in [0, 1)");
  require(o.line_points >= 1, "line points", o.line_points, ">= 1");
  require(o.rivals >= 1, "rivals", o.rivals, ">= 1");
  require(o.confirm_window >= 0, "confirm window", o.confirm_window, ">= 0");
}

class Search {
 public:
  Search(const SplitLattice& lattice, const Measure& measure, const RefineOptions& o)
      : lattice_(lattice), measure_(measure), o_(o) {}

  // Measures `u` (once more, if seen); no budget check.
  void run(const Shares& u, const char* role) {
    SplitMeasurement m{inf};
    try {
      m = measure_(u);
    } catch (const Error&) {
      m = SplitMeasurement{inf};
    }
    const double t = std::isfinite(m.makespan_ms) && m.makespan_ms >= 0 ? m.makespan_ms : inf;
    seen_[u].push_back(t);
    if (std::isfinite(t) && m.device_ms.size() == u.size()) times_[u].push_back(m.device_ms);
    out_.probes.push_back(RefineProbe{u, t, role});
  }
  // Each device's median time at `u`, when measured.
  std::optional<std::vector<double>> device_times(const Shares& u) const {
    const auto it = times_.find(u);
    if (it == times_.end()) return std::nullopt;
    std::vector<double> med;
    for (std::size_t i = 0; i < u.size(); ++i) {
      Samples s;
      for (const auto& run : it->second) s.ms.push_back(run[i]);
      med.push_back(s.median());
    }
    return med;
  }
  // Measures a split not measured yet, within the budget.
  void probe(const Shares& u, const char* role) {
    if (seen_.count(u) || !budget_left()) return;
    ++distinct_;
    run(u, role);
  }
  bool budget_left() const { return distinct_ < o_.max_points; }
  double value(const Shares& u) const { return Samples{seen_.at(u)}.median(); }

  // The measured split with the smallest median (ties: the first in order)
  // among those using `devices` devices (0: any; several: at least 2).
  static constexpr std::size_t several = std::numeric_limits<std::size_t>::max();
  std::optional<Shares> best(std::size_t devices = 0) const {
    std::optional<Shares> b;
    for (const auto& [u, samples] : seen_) {
      const std::size_t used = device_set(u).size();
      if (devices == several ? used < 2 : devices && used != devices) continue;
      if (std::isfinite(value(u)) && (!b || value(u) < value(*b))) b = u;
    }
    return b;
  }

  // The `count` measured splits using `devices` devices with the smallest
  // medians, ascending (failed ones never).
  std::vector<Shares> leaders(std::size_t devices, std::size_t count) const {
    std::vector<Shares> all;
    for (const auto& [u, samples] : seen_) {
      if (device_set(u).size() == devices && std::isfinite(value(u))) all.push_back(u);
    }
    std::stable_sort(all.begin(), all.end(), [&](const Shares& x, const Shares& y) { return value(x) < value(y); });
    if (all.size() > count) all.resize(count);
    return all;
  }

  void endpoints(const std::optional<std::vector<double>>& predicted);
  void balance();
  bool drop();
  void lines();
  void confirm();
  RefineOutcome finish();

 private:
  unsigned search_line(const Line& line, double step_fraction, unsigned limit);

  const SplitLattice& lattice_;
  const Measure& measure_;
  const RefineOptions& o_;
  std::map<Shares, std::vector<double>> seen_;                // split → every measurement (inf: failed)
  std::map<Shares, std::vector<std::vector<double>>> times_;  // split → each run's device times
  std::optional<Shares> chosen_;                              // set by confirm()
  unsigned distinct_ = 0;
  RefineOutcome out_;
};

// Each device alone that can be the best single device, the predicted
// fastest first (device order without predictions).
void Search::endpoints(const std::optional<std::vector<double>>& predicted) {
  const std::size_t n = lattice_.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<bool> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = lattice_.total_units > 0 && lattice_.contains(lattice_.alone(i));
  if (predicted && std::all_of(predicted->begin(), predicted->end(), [](double p) { return p > 0; })) {
    const auto& p = *predicted;
    const double least = *std::min_element(p.begin(), p.end());
    for (std::size_t i = 0; i < n; ++i) want[i] = want[i] && p[i] <= o_.endpoint_margin * least;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  }
  for (std::size_t i : order) {
    if (want[i]) probe(lattice_.alone(i), "alone");
  }
}

// Searches `line` from its best point for at most `limit` new splits;
// returns how many it measured. Splits measured before that lie on the line
// count as its points.
unsigned Search::search_line(const Line& line, double step_fraction, unsigned limit) {
  LineView v;
  v.count = line.count;
  v.first_step = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::llround(step_fraction * static_cast<double>(line.count - 1))));
  v.alone = [&](std::size_t k) {
    const auto u = line.at(k);
    return u && device_set(*u).size() == 1;
  };
  for (const auto& [u, samples] : seen_) {
    if (const auto k = line.index(u)) v.value[*k] = value(u);
  }
  unsigned measured = 0;
  while (measured < limit && budget_left()) {
    const auto step = next_on_line(v);
    if (!step) break;
    const auto u = line.at(step->k);
    if (!u) {
      v.value[step->k] = inf;  // not settable: never chosen, costs nothing
      continue;
    }
    if (!seen_.count(*u)) {
      probe(*u, step->role);
      ++measured;
    }
    v.value[step->k] = value(*u);
  }
  return measured;
}

// When the measurements carry each device's time: from the best split using
// several devices, towards the split where each device, keeping the rate it
// showed there, would finish with the others (balanced()). The balanced
// split is measured; when it is not better, the segment is narrowed by
// golden section (line_points splits at most). Repeats while it improves
// and the move exceeds balance_tolerance of the range.
void Search::balance() {
  while (budget_left()) {
    const auto b = best(several);
    const auto t = b ? device_times(*b) : std::nullopt;
    const auto target = t ? balanced(*b, *t, lattice_.total_units) : std::nullopt;
    if (!target) return;
    double move = 0;
    for (std::size_t i = 0; i < b->size(); ++i)
      move = std::max(move, std::abs((*target)[i] - static_cast<double>((*b)[i])));
    if (move < o_.balance_tolerance * static_cast<double>(lattice_.total_units)) return;
    const Line line = segment_line(lattice_, *b, *target);
    const auto end = line.at(line.count - 1);
    if (!end || seen_.count(*end)) return;
    probe(*end, "balance");
    if (value(*end) < value(*b)) continue;
    search_line(line, 1.0, o_.line_points);
    if (best(several) == b) return;
  }
}

// Three or more devices: the best split without each of its devices in
// turn, the smallest slice first (the others keep their proportions);
// true as soon as one is better. Without a device that adds little, the
// others may share the host's bus and cores better.
bool Search::drop() {
  const auto b = best(several);
  if (!b || lattice_.size() < 3) return false;
  auto used = device_set(*b);
  if (used.size() < 3) return false;  // without one of two: a device alone, measured as an endpoint
  std::stable_sort(used.begin(), used.end(), [&](std::size_t x, std::size_t y) { return (*b)[x] < (*b)[y]; });
  for (std::size_t j : used) {
    const auto u = rest_line(lattice_, *b, j).at(0);
    if (!u || seen_.count(*u) || !budget_left()) continue;
    probe(*u, "drop");
    if (value(*u) < value(*b)) return true;
  }
  return false;
}

// Rounds of lines through the best split: two devices have one line (the
// whole range, searched to its end); more have, per round, each device
// against all others, then each pair, with a first step shrinking per round.
void Search::lines() {
  const std::size_t n = lattice_.size();
  struct Direction {
    std::size_t a, b;  // a against b; b == n: a against all others
  };
  std::vector<Direction> dirs;
  if (n > 2) {
    for (std::size_t j = 0; j < n; ++j) dirs.push_back({j, n});
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) dirs.push_back({i, j});
  }
  double step = o_.initial_step;
  while (budget_left()) {
    unsigned measured = 0;
    for (const auto& d : dirs) {
      const auto b = best();
      if (!b || !budget_left()) return;
      const Line line = d.b == n ? rest_line(lattice_, *b, d.a) : pair_line(lattice_, *b, d.a, d.b);
      if (line.count < 2) continue;
      if (n == 2) {
        measured += search_line(line, step, o_.max_points);
        continue;
      }
      // Three or more: a window of ±step of the line around the best, its
      // first probes halfway to the window's edges.
      const auto half =
          std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(step * static_cast<double>(line.count - 1))));
      if (const auto at = line.index(*b)) measured += search_line(window(line, *at, half), 0.5, o_.line_points);
    }
    if (measured == 0) return;  // every line is done
    step *= o_.step_shrink;
  }
}

// The choice of the device set. Candidates: the best device alone, and for
// each device count its `rivals` best splits within confirm_window of the
// best makespan measured. With two or more, each is measured `confirm` times
// more, interleaved, and only their medians count from here (one lucky
// sample, a split's or a device's alone, must not decide): per device count
// the lowest median, then, from the fewest devices up, a count with more
// devices replaces the one kept only when it beats it by alone_margin (a
// single device) or subset_margin (several).
void Search::confirm() {
  const auto b = best();
  if (!b) return;
  std::map<std::size_t, std::vector<Shares>> cands;  // device count → candidates
  std::size_t count = 0;
  for (std::size_t c = 1; c <= lattice_.size(); ++c) {
    for (const auto& u : leaders(c, o_.rivals)) {
      const bool first_alone = c == 1 && cands[1].empty();
      if (first_alone || value(u) <= (1 + o_.confirm_window) * value(*b)) {
        cands[c].push_back(u);
        ++count;
      }
    }
  }
  if (count < 2) return;  // nothing to confirm against
  for (unsigned r = 0; r < o_.confirm; ++r) {
    for (auto it = cands.rbegin(); it != cands.rend(); ++it) {
      for (const auto& u : it->second) run(u, "confirm");
    }
  }
  std::optional<Shares> pick;
  for (const auto& [c, us] : cands) {
    if (us.empty()) continue;
    Shares top = c == 1 ? *best(1) : us.front();  // alone: any device that leads now
    for (const auto& u : us) top = value(u) < value(top) ? u : top;
    const double margin = pick && device_set(*pick).size() == 1 ? o_.alone_margin : o_.subset_margin;
    if (!pick || value(top) < (1 - margin) * value(*pick)) pick = top;
  }
  chosen_ = pick;
}

RefineOutcome Search::finish() {
  const auto chosen = chosen_ ? chosen_ : best();
  out_.units = chosen ? *chosen : Shares{};
  out_.makespan_ms = chosen ? value(*chosen) : inf;
  if (const auto alone = best(1)) {
    out_.best_alone_ms = value(*alone);
    out_.best_alone_device = device_set(*alone).front();
  }
  return std::move(out_);
}

}  // namespace

RefineOutcome refine_split_search(const SplitLattice& lattice, const Shares& start, const Measure& measure,
                                  const RefineOptions& o, std::optional<std::vector<double>> predicted_alone) {
  check_options(o);
  if (predicted_alone && predicted_alone->size() != lattice.size()) {
    throw UsageError(
        fmt::format("split refinement: {} solo predictions for {} devices", predicted_alone->size(), lattice.size()));
  }
  const Shares first = lattice.snap(start);  // throws when no split aligns
  Search s(lattice, measure, o);
  s.probe(first, "start");
  s.endpoints(predicted_alone);
  s.balance();
  while (s.drop()) s.balance();
  s.lines();
  s.confirm();
  return s.finish();
}

// ---- JSON -------------------------------------------------------------------------------------

nlohmann::json to_json(const RefineOutcome& o) {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : o.probes) {
    probes.push_back({{"units", p.units}, {"makespan_ms", number(p.makespan_ms)}, {"role", p.role}});
  }
  return {{"units", o.units},
          {"makespan_ms", number(o.makespan_ms)},
          {"best_alone_ms", o.best_alone_ms ? nlohmann::json(*o.best_alone_ms) : nlohmann::json(nullptr)},
          {"best_alone_device", o.best_alone_device ? nlohmann::json(*o.best_alone_device) : nlohmann::json(nullptr)},
          {"probes", probes}};
}

RefineOutcome refine_outcome_from_json(const nlohmann::json& j) {
  auto number = [](const nlohmann::json& v) { return v.is_null() ? inf : v.get<double>(); };
  RefineOutcome o;
  o.units = j.at("units").get<Shares>();
  o.makespan_ms = number(j.at("makespan_ms"));
  if (!j.at("best_alone_ms").is_null()) o.best_alone_ms = j.at("best_alone_ms").get<double>();
  if (!j.at("best_alone_device").is_null()) o.best_alone_device = j.at("best_alone_device").get<std::size_t>();
  for (const auto& p : j.at("probes")) {
    o.probes.push_back(
        RefineProbe{p.at("units").get<Shares>(), number(p.at("makespan_ms")), p.at("role").get<std::string>()});
  }
  return o;
}

// ---- on devices -------------------------------------------------------------------------------

SplitRefinement refine_split(MultiDeviceRunner& runner, Calibration& cal, const std::vector<LocalSize>& locals,
                             const TimingOptions& timing, const RefineOptions& options) {
  const std::size_t n = runner.size();
  if (n < 2 || cal.devices.size() != n || locals.size() != n) {
    throw UsageError(
        fmt::format("split refinement needs two or more devices, each calibrated and with a local "
                    "size (got {} devices, {} calibrated, {} local sizes)",
                    n, cal.devices.size(), locals.size()));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned dim = cal.dim;
  const SplitLattice lattice{runner.spec().split_units(runner.problem(), dim),
                             split_granularities(runner.spec(), runner.problem(), dim, locals)};
  SplitRefinement res;
  res.model_blocks = model_blocks(SplitModel::measured, runner, dim, locals, &cal);

  // Solo predictions at the full size decide which devices alone can matter.
  std::vector<double> alone;
  for (const auto& d : cal.devices) {
    DeviceCalibration solo = d;
    solo.concurrency_scale = 1.0;
    alone.push_back(solo.predict_ms(runner.work_items(dim, lattice.total_units)));
  }

  std::map<Shares, std::vector<double>> walls;  // split → each device's wall median (latest run)
  std::string last_error;
  auto measure = [&](const Shares& u) -> SplitMeasurement {
    const SplitRunResult r = runner.run(shares_blocks(dim, u), locals, timing);
    res.concurrent_rounds += timing.warmup + static_cast<unsigned>(r.makespan.size());
    if (!r.ok()) {
      last_error = r.error;
      return SplitMeasurement{inf};
    }
    std::vector<double> w;
    for (const auto& s : r.slices) w.push_back(s.wall.size() ? s.wall.median() : 0.0);
    walls[u] = w;
    return SplitMeasurement{r.makespan.median(), std::move(w)};
  };
  res.search = refine_split_search(lattice, block_units(res.model_blocks), measure, options, alone);
  res.elapsed_ms = ms_since(t0);
  if (!res.search.found()) {
    if (res.search.probes.empty()) {
      res.blocks = res.model_blocks;  // no budget: the model's prediction as it is
      return res;
    }
    throw Error(fmt::format("split refinement of {} {}: no split ran correctly; last failure: {}", runner.spec().name(),
                            runner.problem().text, last_error));
  }
  res.blocks = shares_blocks(dim, res.search.units);
  if (res.search.devices().size() >= 2) {
    const auto& w = walls.at(res.search.units);
    for (std::size_t i : res.search.devices()) {
      observe_concurrent(cal.devices[i], runner.work_items(dim, res.search.units[i]), w[i]);
    }
  }
  return res;
}

}  // namespace wstune
