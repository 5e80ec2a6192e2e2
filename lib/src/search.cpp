// Measured local-work-size search: strategies, stop conditions and tune().
// See docs/tuning.md.
#include "wstune/search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <span>

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/rules.hpp"
#include "wstune/search_space.hpp"

namespace wstune {
namespace {

using Clock = std::chrono::steady_clock;

class ListSearcher : public Searcher {
 public:
  ListSearcher(std::string name, std::optional<std::uint64_t> shuffle_seed)
      : name_(std::move(name)), seed_(shuffle_seed) {}
  std::string_view name() const override { return name_; }
  void initialize(const std::vector<Extent>& space, const LocalSize&, const TuneTarget&) override {
    order_ = space;
    if (seed_) {
      std::mt19937_64 rng(*seed_);
      std::shuffle(order_.begin(), order_.end(), rng);
    }
    pos_ = 0;
  }
  std::optional<Extent> next() override {
    if (pos_ >= order_.size()) return std::nullopt;
    return order_[pos_++];
  }
  void report(const Trial&) override {}

 private:
  std::string name_;
  std::optional<std::uint64_t> seed_;
  std::vector<Extent> order_;
  std::size_t pos_ = 0;
};

class RuleSearcher final : public Searcher {
 public:
  std::string_view name() const override { return "rule"; }
  void initialize(const std::vector<Extent>&, const LocalSize&, const TuneTarget&) override {}
  std::optional<Extent> next() override { return std::nullopt; }
  void report(const Trial&) override {}
};

// Best-first local search over the lattice of divisor indices.
class GuidedSearcher final : public Searcher {
 public:
  explicit GuidedSearcher(std::uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "guided"; }

  bool rule_first() const override { return false; }

  void initialize(const std::vector<Extent>& space, const LocalSize& rule, const TuneTarget& target) override {
    space_ = space;
    std::set<std::size_t> xs, ys;
    for (const auto& e : space) {
      xs.insert(e.x);
      ys.insert(e.y);
      valid_.insert(key(e));
    }
    xs_.assign(xs.begin(), xs.end());
    ys_.assign(ys.begin(), ys.end());
    // On a CPU in 1-D the first seed is the paper's rule: the smallest group
    // that fills the SIMD lanes. NULL (measured first by tune()) is PoCL's
    // large default group, so under a two-evaluation budget the pair covers
    // both ends of the size range; the measured 1-D CPU optima run from 4 to
    // 4096 work-items (docs/tuning.md).
    const bool cpu = target.device.type == "cpu";
    const bool rule_seed_first = rule && cpu && target.global.dims == 1;
    if (rule_seed_first) seeds_.push_back(*rule);
    // Then the prior's best shape at the preferred group size, at half of
    // it, and at double (or a quarter when double does not fit), then the
    // rule. On a CPU the seeds are 8x apart (32, 256, 2048 work-items): the
    // measured PoCL optima span 4 to 4096 work-items, and hill-climbing a
    // noisy landscape from 256 stalls before 2048.
    const auto order = prior_order(space, target);
    const auto n_star = static_cast<double>(prior_group_size(target));
    const std::size_t prior_seeds = seeds_.size() + 3;
    static constexpr double gpu_factors[] = {1.0, 0.5, 2.0, 0.25};
    static constexpr double cpu_factors[] = {1.0, 0.125, 8.0, 0.25, 4.0, 0.5, 2.0};
    for (double f : cpu ? std::span<const double>(cpu_factors) : std::span<const double>(gpu_factors)) {
      if (seeds_.size() == prior_seeds) break;
      const Extent* pick = nullptr;
      double dist = std::numeric_limits<double>::max();
      for (const auto& e : order) {  // best prior first: the first of the closest size wins
        const double d = std::abs(std::log2(static_cast<double>(e.count()) / (n_star * f)));
        if (d < dist - 1e-9) {
          dist = d;
          pick = &e;
        }
      }
      if (pick && dist < 0.5 &&
          std::none_of(seeds_.begin(), seeds_.end(), [&](const Extent& s) { return key(s) == key(*pick); }))
        seeds_.push_back(*pick);
    }
    if (seeds_.empty() && !order.empty()) seeds_.push_back(order.front());
    if (rule && !rule_seed_first) seeds_.push_back(*rule);
  }

  std::optional<Extent> next() override {
    while (!seeds_.empty()) {
      const Extent s = seeds_.front();
      seeds_.erase(seeds_.begin());
      if (!measured_.count(key(s))) return s;
    }
    // Neighbours of measured shapes, best median first.
    std::vector<std::pair<double, Extent>> ranked(done_.begin(), done_.end());
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [ms, e] : ranked) {
      auto n = neighbours(e);
      std::shuffle(n.begin(), n.end(), rng_);
      // Prefer moves along x (data-sharing axis of most kernels), then y.
      std::stable_sort(n.begin(), n.end(), [&](const Extent& a, const Extent& b) {
        return (a.y != e.y) < (b.y != e.y);
      });
      for (const auto& c : n)
        if (!measured_.count(key(c))) return c;
    }
    // Disconnected leftovers (cannot happen for divisor lattices, kept for safety).
    for (const auto& e : space_)
      if (!measured_.count(key(e))) return e;
    return std::nullopt;
  }

  void report(const Trial& t) override {
    if (!t.local) return;
    measured_.insert(key(*t.local));
    const double ms = t.ok() ? t.median_ms() : std::numeric_limits<double>::infinity();
    if (std::isfinite(ms)) done_.emplace_back(ms, *t.local);
  }

 private:
  static std::pair<std::size_t, std::size_t> key(const Extent& e) { return {e.x, e.y}; }

  std::vector<Extent> neighbours(const Extent& e) const {
    std::vector<Extent> out;
    const auto ix = static_cast<long>(std::lower_bound(xs_.begin(), xs_.end(), e.x) - xs_.begin());
    const auto iy = static_cast<long>(std::lower_bound(ys_.begin(), ys_.end(), e.y) - ys_.begin());
    for (long dy = -1; dy <= 1; ++dy) {
      for (long dx = -1; dx <= 1; ++dx) {
        if (!dx && !dy) continue;
        const long nx = ix + dx, ny = iy + dy;
        if (nx < 0 || ny < 0 || nx >= static_cast<long>(xs_.size()) || ny >= static_cast<long>(ys_.size())) continue;
        const Extent c{xs_[static_cast<std::size_t>(nx)], ys_[static_cast<std::size_t>(ny)], e.dims};
        if (valid_.count(key(c))) out.push_back(c);
      }
    }
    // Same-size reshapes next to e (e.g. 8x4 -> 16x2, 4x8).
    const auto same = shapes_of(e.count(), space_);
    for (std::size_t i = 0; i < same.size(); ++i) {
      if (same[i].x != e.x) continue;
      if (i > 0) out.push_back(same[i - 1]);
      if (i + 1 < same.size()) out.push_back(same[i + 1]);
    }
    return out;
  }

  std::mt19937_64 rng_;
  std::vector<Extent> space_;
  std::vector<std::size_t> xs_, ys_;
  std::set<std::pair<std::size_t, std::size_t>> valid_, measured_;
  std::vector<Extent> seeds_;
  std::vector<std::pair<double, Extent>> done_;
};

class MaxEvaluations final : public StopCondition {
 public:
  explicit MaxEvaluations(unsigned n) : n_(n) {}
  bool reached(const SearchProgress& p) const override { return p.evaluations >= n_; }
  std::string describe() const override { return fmt::format("{} evaluations", n_); }

 private:
  unsigned n_;
};

class TimeLimit final : public StopCondition {
 public:
  explicit TimeLimit(Clock::duration d) : d_(d) {}
  bool reached(const SearchProgress& p) const override { return p.elapsed >= d_; }
  std::string describe() const override {
    return fmt::format("time limit {:.3g} s", std::chrono::duration<double>(d_).count());
  }

 private:
  Clock::duration d_;
};

class Either final : public StopCondition {
 public:
  Either(std::unique_ptr<StopCondition> a, std::unique_ptr<StopCondition> b) : a_(std::move(a)), b_(std::move(b)) {}
  bool reached(const SearchProgress& p) const override { return a_->reached(p) || b_->reached(p); }
  std::string describe() const override { return a_->describe() + " or " + b_->describe(); }

 private:
  std::unique_ptr<StopCondition> a_, b_;
};

class Never final : public StopCondition {
 public:
  bool reached(const SearchProgress&) const override { return false; }
  std::string describe() const override { return "none"; }
};

}  // namespace

std::size_t prior_group_size(const TuneTarget& t) {
  std::size_t cap = t.limits.max_work_group_size;
  if (t.limits.kernel_work_group_size) cap = cap ? std::min(cap, t.limits.kernel_work_group_size) : t.limits.kernel_work_group_size;
  const std::size_t n = 256;
  return cap ? std::min(n, cap) : n;
}

std::vector<Extent> prior_order(const std::vector<Extent>& space, const TuneTarget& t) {
  const bool gpu = t.device.type == "gpu";
  std::size_t w = t.device.preferred_wg_multiple;
  if (!w) w = gpu ? 32 : 1;
  std::size_t max_n = 1;
  for (const auto& e : space) max_n = std::max(max_n, e.count());
  const double n_star = static_cast<double>(std::min(prior_group_size(t), max_n));
  const double wd = static_cast<double>(w);
  auto score = [&](const Extent& e) {
    const double n = static_cast<double>(e.count());
    const double eff = n / (std::ceil(n / wd) * wd);
    double s = 3.0 * (1.0 - eff) + std::abs(std::log2(n / n_star));
    if (e.dims == 2) {
      const double x = static_cast<double>(e.x);
      if (gpu) {
        const double want = std::min(wd, static_cast<double>(t.global.x));
        if (x < want) s += std::log2(want / x);
        s += 0.2 * std::abs(std::log2(x / 64.0));
      } else {
        s += 0.3 * std::abs(std::log2(x / wd));
      }
    }
    return s;
  };
  std::vector<std::pair<double, Extent>> scored;
  scored.reserve(space.size());
  for (const auto& e : space) scored.emplace_back(score(e), e);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    if (std::abs(a.first - b.first) > 1e-9) return a.first < b.first;
    if (a.second.x != b.second.x) return a.second.x > b.second.x;
    return a.second.y < b.second.y;
  });
  std::vector<Extent> out;
  out.reserve(scored.size());
  for (const auto& [sc, e] : scored) out.push_back(e);
  return out;
}

std::unique_ptr<Searcher> make_exhaustive_searcher() { return std::make_unique<ListSearcher>("exhaustive", std::nullopt); }
std::unique_ptr<Searcher> make_random_searcher(std::uint64_t seed) { return std::make_unique<ListSearcher>("random", seed); }
std::unique_ptr<Searcher> make_guided_searcher(std::uint64_t seed) { return std::make_unique<GuidedSearcher>(seed); }
std::unique_ptr<Searcher> make_rule_searcher() { return std::make_unique<RuleSearcher>(); }

std::unique_ptr<Searcher> make_searcher(std::string_view name, std::uint64_t seed) {
  if (name == "exhaustive") return make_exhaustive_searcher();
  if (name == "random") return make_random_searcher(seed);
  if (name == "guided") return make_guided_searcher(seed);
  if (name == "rule") return make_rule_searcher();
  throw UsageError(fmt::format("unknown strategy '{}': use exhaustive, random, guided or rule", name));
}

std::unique_ptr<StopCondition> max_evaluations(unsigned n) { return std::make_unique<MaxEvaluations>(n); }
std::unique_ptr<StopCondition> time_limit(Clock::duration limit) { return std::make_unique<TimeLimit>(limit); }
std::unique_ptr<StopCondition> either(std::unique_ptr<StopCondition> a, std::unique_ptr<StopCondition> b) {
  return std::make_unique<Either>(std::move(a), std::move(b));
}
std::unique_ptr<StopCondition> never_stop() { return std::make_unique<Never>(); }

std::string_view to_string(TrialPhase p) noexcept {
  switch (p) {
    case TrialPhase::baseline: return "baseline";
    case TrialPhase::rule: return "rule";
    case TrialPhase::search: return "search";
    case TrialPhase::tiebreak: return "tiebreak";
  }
  return "search";
}

std::optional<double> TuneResult::ratio_to_baseline() const {
  if (!best.ok() || !baseline.ok() || baseline.median_ms() <= 0) return std::nullopt;
  return best.median_ms() / baseline.median_ms();
}

std::optional<double> TuneResult::ratio_to_rule() const {
  if (!best.ok() || !rule || !rule->ok() || rule->median_ms() <= 0) return std::nullopt;
  return best.median_ms() / rule->median_ms();
}

TuneResult tune(Evaluator& evaluator, Searcher& searcher, const StopCondition& stop, const TuneOptions& options) {
  const auto t0 = Clock::now();
  TuneResult res;
  res.target = evaluator.target();
  res.strategy = std::string(searcher.name());
  const TuneTarget& tg = res.target;
  res.space = enumerate_local_sizes(tg.global, tg.limits);
  const LocalSize rule = paper_rule(tg.global, res.space, tg.priority, tg.pe_per_cu);
  searcher.initialize(res.space, rule, tg);

  std::map<std::string, std::size_t> index;  // to_string(local) -> trials
  auto& trials = res.trials;
  auto find = [&](const LocalSize& l) -> Trial* {
    auto it = index.find(to_string(l));
    return it == index.end() ? nullptr : &trials[it->second];
  };
  auto measure = [&](const LocalSize& l, TrialPhase phase) -> const Trial& {
    Trial t;
    if (auto cached = options.lookup ? options.lookup(l) : std::nullopt) {
      t = *cached;
      t.local = l;
      t.from_store = true;
    } else {
      t = evaluator.evaluate(l, options.timing);
      ++res.evaluations;
      if (options.on_trial) options.on_trial(t, phase);
    }
    index[to_string(l)] = trials.size();
    trials.push_back(std::move(t));
    return trials.back();
  };

  measure(std::nullopt, TrialPhase::baseline);
  if (rule && searcher.rule_first()) searcher.report(measure(rule, TrialPhase::rule));
  auto progress_now = [&] {
    return SearchProgress{res.evaluations, static_cast<unsigned>(res.space.size()), Clock::now() - t0};
  };

  std::size_t skips = 0;
  for (;;) {
    if (stop.reached(progress_now())) {
      res.stop_reason = stop.describe();
      break;
    }
    const auto s = searcher.next();
    if (!s) {
      res.stop_reason = "searcher done";
      break;
    }
    if (const Trial* seen = find(*s)) {
      searcher.report(*seen);
      if (++skips > res.space.size() + 2) {
        res.stop_reason = "searcher repeats itself";
        break;
      }
      continue;
    }
    skips = 0;
    const bool is_rule = rule && LocalSize(*s) == rule;
    searcher.report(measure(*s, is_rule ? TrialPhase::rule : TrialPhase::search));
  }
  // A searcher that did not want the rule first: the rule for the report,
  // only if the budget has room for it.
  if (rule && !find(rule) && !stop.reached(progress_now())) searcher.report(measure(rule, TrialPhase::rule));

  // Confirmation, then ties. One trial's samples are taken back to back, so
  // a trial that ran at a lucky (or unlucky) moment shifts all of them: on
  // PoCL whole trials of the same shape differ by up to 2x. The first
  // confirm_rounds rounds therefore give the tiebreak_candidates best shapes
  // and NULL one more trial each, interleaved, whatever their medians; later
  // rounds only the shapes still within the tie window of the best. Samples
  // are merged, so a shape's median is over all its trials.
  auto ranked_ok = [&] {
    std::vector<Trial*> ok;
    for (auto& t : trials)
      if (t.ok() && t.kernel.size()) ok.push_back(&t);
    std::sort(ok.begin(), ok.end(), [](const Trial* a, const Trial* b) { return a->median_ms() < b->median_ms(); });
    return ok;
  };
  // Each configuration's first-trial sample count: every extra trial takes
  // the same, so all of its trials weigh the same in the merged median.
  std::map<std::string, std::size_t> first_samples;
  for (const auto& t : trials) first_samples[to_string(t.local)] = t.kernel.size();
  // The window: the tolerance, widened to the best's sample spread. After
  // the confirmation rounds its samples come from several trials, so the
  // spread includes the between-trial noise too.
  auto window_of = [&](const Trial& best) {
    return std::max(options.tie_tolerance, std::min(options.tie_tolerance_max, best.kernel.relative_iqr()));
  };
  for (unsigned round = 0; round < options.tiebreak_rounds; ++round) {
    const auto ok = ranked_ok();
    if (ok.size() < 2) break;
    const bool confirming = round < options.confirm_rounds;
    const double limit = ok.front()->median_ms() * (1 + window_of(*ok.front()));
    std::vector<Trial*> tied;
    for (Trial* t : ok)
      if ((confirming || t->median_ms() <= limit) && tied.size() < options.tiebreak_candidates) tied.push_back(t);
    Trial* null_trial = find(std::nullopt);
    if (null_trial && null_trial->ok() && (confirming || null_trial->median_ms() <= limit) &&
        std::find(tied.begin(), tied.end(), null_trial) == tied.end())
      tied.push_back(null_trial);
    if (tied.size() < 2) break;
    for (Trial* t : tied) {
      const LocalSize l = t->local;
      // As many samples as the configuration's first trial, and no more: a
      // noisy trial would otherwise take up to max_repetitions samples and
      // outweigh the others in the merged median.
      TimingOptions again = options.timing;
      again.repetitions = static_cast<unsigned>(std::max<std::size_t>(1, first_samples[to_string(l)]));
      again.min_timed_ms = 0;
      again.max_median_error = 0;
      Trial extra = evaluator.evaluate(l, again);
      ++res.tiebreak_trials;
      if (options.on_trial) options.on_trial(extra, TrialPhase::tiebreak);
      Trial& target = *find(l);  // trials does not grow here; the pointer stays valid
      if (extra.ok()) {
        target.kernel.ms.insert(target.kernel.ms.end(), extra.kernel.ms.begin(), extra.kernel.ms.end());
      } else if (l) {
        target.status = extra.status;  // a flaky configuration is not an answer
        target.error = extra.error;
      }  // NULL keeps its earlier samples: the baseline (and the never-slower guarantee) stays
    }
  }

  const Trial& baseline = *find(std::nullopt);
  res.baseline = baseline;
  if (rule)
    if (const Trial* r = find(rule)) res.rule = *r;
  const auto ok = ranked_ok();
  if (baseline.ok()) {
    res.best = baseline;
    if (!ok.empty() && ok.front()->local && ok.front()->median_ms() < baseline.median_ms()) res.best = *ok.front();
  } else {
    res.best = ok.empty() ? baseline : *ok.front();
  }
  res.wall_ms = ms_since(t0);
  return res;
}

}  // namespace wstune
