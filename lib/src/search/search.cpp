// Measured local-work-size search: strategies, stop conditions and tune().
// See docs/tuning.md.
#include "search/search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <span>

#include <fmt/format.h>

#include "search/strategies.hpp"
#include "space/rules.hpp"
#include "space/search_space.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

using Clock = std::chrono::steady_clock;

class ListSearcher : public Searcher {
 public:
  ListSearcher(std::string name, std::optional<std::uint64_t> shuffle_seed)
      : name_(std::move(name)), seed_(shuffle_seed) {}
  std::string_view name() const override { return name_; }
  void initialize(const SearchSpace& space, const TuneTarget&) override {
    order_.resize(space.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    if (seed_) {
      std::mt19937_64 rng(*seed_);
      std::shuffle(order_.begin(), order_.end(), rng);
    }
    pos_ = 0;
  }
  std::optional<std::size_t> next() override {
    if (pos_ >= order_.size()) return std::nullopt;
    return order_[pos_++];
  }
  void report(std::size_t, const Trial&) override {}
  std::vector<std::size_t> upcoming(std::size_t n) const override {
    const std::size_t end = std::min(order_.size(), pos_ + n);
    return {order_.begin() + static_cast<std::ptrdiff_t>(pos_), order_.begin() + static_cast<std::ptrdiff_t>(end)};
  }

 private:
  std::string name_;
  std::optional<std::uint64_t> seed_;
  std::vector<std::size_t> order_;
  std::size_t pos_ = 0;
};

class RuleSearcher final : public Searcher {
 public:
  std::string_view name() const override { return "rule"; }
  void initialize(const SearchSpace&, const TuneTarget&) override {}
  std::optional<std::size_t> next() override { return std::nullopt; }
  void report(std::size_t, const Trial&) override {}
};

// Best-first local search over SearchSpace::neighbours().
class GuidedSearcher final : public Searcher {
 public:
  explicit GuidedSearcher(std::uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "guided"; }

  bool rule_first() const override { return false; }

  void initialize(const SearchSpace& space, const TuneTarget& target) override {
    space_ = &space;
    const auto set = space.find_set(space.baseline().params);
    const auto rule = space.rule();
    // On a CPU in 1-D the first seed is the paper's rule: the smallest group
    // that fills the SIMD lanes. NULL (measured first by tune()) is PoCL's
    // large default group, so under a two-evaluation budget the pair covers
    // both ends of the size range; the measured 1-D CPU optima run from 4 to
    // 4096 work-items (docs/tuning.md).
    const bool cpu = target.device.type == "cpu";
    const bool rule_seed_first = rule && cpu && target.global.dims == 1;
    if (rule_seed_first) seeds_.push_back(*rule);
    if (set) add_prior_seeds(*set, target, cpu);
    if (rule && !rule_seed_first) add_seed(*rule);
    if (!space.parameters().empty() && !space.empty()) {  // two random starts elsewhere in the parameter space
      std::uniform_int_distribution<std::size_t> any(0, space.size() - 1);
      add_seed(any(rng_));
      add_seed(any(rng_));
    }
    if (seeds_.empty() && !space.empty()) seeds_.push_back(0);
  }

  std::optional<std::size_t> next() override {
    while (!seeds_.empty()) {
      const std::size_t s = seeds_.front();
      seeds_.erase(seeds_.begin());
      if (!measured_.count(s)) return s;
    }
    // Neighbours of measured configurations, best median first.
    std::vector<std::pair<double, std::size_t>> ranked(done_.begin(), done_.end());
    std::sort(ranked.begin(), ranked.end());
    for (const auto& [ms, e] : ranked) {
      auto n = space_->neighbours(e);
      std::shuffle(n.begin(), n.end(), rng_);
      // Prefer moves that keep y and z (x is the data-sharing axis of most
      // kernels), then moves in the same parameter set.
      const LocalSize& here = space_->local(e);
      auto cost = [&, e = e](std::size_t c) {  // e copied: clang 14 cannot capture a structured binding
        const LocalSize& l = space_->local(c);
        const bool same_set = space_->parameter_set(c) == space_->parameter_set(e);
        const bool keeps_yz = l && here && l->y == here->y && l->z == here->z;
        return (same_set ? 0 : 2) + (keeps_yz ? 0 : 1);
      };
      std::stable_sort(n.begin(), n.end(), [&](std::size_t a, std::size_t b) { return cost(a) < cost(b); });
      for (const std::size_t c : n)
        if (!measured_.count(c)) return c;
    }
    // Leftovers unreachable from the measured ones, in a seeded random order.
    if (leftovers_.empty() && !leftovers_built_) {
      leftovers_built_ = true;
      leftovers_.resize(space_->size());
      std::iota(leftovers_.begin(), leftovers_.end(), std::size_t{0});
      std::shuffle(leftovers_.begin(), leftovers_.end(), rng_);
    }
    while (!leftovers_.empty()) {
      const std::size_t c = leftovers_.back();
      leftovers_.pop_back();
      if (!measured_.count(c)) return c;
    }
    return std::nullopt;
  }

  std::vector<std::size_t> upcoming(std::size_t n) const override {
    return {seeds_.begin(), seeds_.begin() + static_cast<std::ptrdiff_t>(std::min(n, seeds_.size()))};
  }

  void report(std::size_t entry, const Trial& t) override {
    measured_.insert(entry);
    const double ms = t.ok() ? t.median_ms() : std::numeric_limits<double>::infinity();
    if (std::isfinite(ms)) done_.emplace_back(ms, entry);
  }

 private:
  void add_seed(std::size_t e) {
    if (std::find(seeds_.begin(), seeds_.end(), e) == seeds_.end()) seeds_.push_back(e);
  }

  // The prior's best shape of the baseline's parameter set at the preferred
  // group size, at half of it, and at double (or a quarter when double does
  // not fit). On a CPU the seeds are 8x apart (32, 256, 2048 work-items): the
  // measured PoCL optima span 4 to 4096 work-items, and hill-climbing a noisy
  // landscape from 256 stalls before 2048.
  void add_prior_seeds(std::size_t set, const TuneTarget& target, bool cpu) {
    const nlohmann::json params = space_->params_of_set(set);
    const auto order = prior_order(space_->shapes_of_set(set), target);
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
      if (!pick || dist >= 0.5) continue;
      if (const auto e = space_->find(Configuration{params, *pick});
          e && std::find(seeds_.begin(), seeds_.end(), *e) == seeds_.end())
        seeds_.push_back(*e);
    }
    if (seeds_.empty() && !order.empty())
      if (const auto e = space_->find(Configuration{params, order.front()})) seeds_.push_back(*e);
  }

  std::mt19937_64 rng_;
  const SearchSpace* space_ = nullptr;
  std::set<std::size_t> measured_;
  std::vector<std::size_t> seeds_;
  std::vector<std::pair<double, std::size_t>> done_;
  std::vector<std::size_t> leftovers_;
  bool leftovers_built_ = false;
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
  bool out_of_time(const SearchProgress& p) const override { return reached(p); }
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
  bool out_of_time(const SearchProgress& p) const override { return a_->out_of_time(p) || b_->out_of_time(p); }
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
  if (t.limits.kernel_work_group_size)
    cap = cap ? std::min(cap, t.limits.kernel_work_group_size) : t.limits.kernel_work_group_size;
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

std::unique_ptr<Searcher> make_exhaustive_searcher() {
  return std::make_unique<ListSearcher>("exhaustive", std::nullopt);
}
std::unique_ptr<Searcher> make_random_searcher(std::uint64_t seed) {
  return std::make_unique<ListSearcher>("random", seed);
}
std::unique_ptr<Searcher> make_guided_searcher(std::uint64_t seed) {
  return std::make_unique<GuidedSearcher>(seed);
}
std::unique_ptr<Searcher> make_rule_searcher() {
  return std::make_unique<RuleSearcher>();
}

std::unique_ptr<Searcher> make_searcher(std::string_view name, std::uint64_t seed) {
  if (name == "exhaustive") return make_exhaustive_searcher();
  if (name == "random") return make_random_searcher(seed);
  if (name == "guided") return make_guided_searcher(seed);
  if (name == "rule") return make_rule_searcher();
  if (name == "auto") return make_auto_searcher(seed);
  if (name == "genetic") return make_genetic_searcher(seed);
  if (name == "annealing") return make_annealing_searcher(seed);
  if (name == "bayes") return make_bayes_searcher(seed);
  if (name == "differential") return make_differential_searcher(seed);
  if (name == "portfolio") return make_portfolio_searcher(seed);
  throw UsageError(fmt::format("unknown strategy '{}': use {}", name, strategy_names()));
}

std::string_view strategy_names() noexcept {
  return "auto, exhaustive, random, guided, rule, genetic, annealing, differential, portfolio or bayes";
}

std::unique_ptr<StopCondition> max_evaluations(unsigned n) {
  return std::make_unique<MaxEvaluations>(n);
}
std::unique_ptr<StopCondition> time_limit(Clock::duration limit) {
  return std::make_unique<TimeLimit>(limit);
}
std::unique_ptr<StopCondition> either(std::unique_ptr<StopCondition> a, std::unique_ptr<StopCondition> b) {
  return std::make_unique<Either>(std::move(a), std::move(b));
}
std::unique_ptr<StopCondition> never_stop() {
  return std::make_unique<Never>();
}

std::string_view to_string(TrialPhase p) noexcept {
  switch (p) {
    case TrialPhase::baseline:
      return "baseline";
    case TrialPhase::rule:
      return "rule";
    case TrialPhase::search:
      return "search";
    case TrialPhase::tiebreak:
      return "tiebreak";
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

namespace {

// One tune() call, along its steps: the baseline and the rule, the search,
// the confirmation and tie rounds, the answer.
class TuneRun {
 public:
  TuneRun(Evaluator& evaluator, Searcher& searcher, const StopCondition& stop, const TuneOptions& options)
      : ev_(evaluator), searcher_(searcher), stop_(stop), opt_(options), space_(evaluator.space()) {
    res_.target = evaluator.target();
    res_.space_size = space_.size();
    searcher_.initialize(space_, res_.target);
    res_.strategy = std::string(searcher.name());  // after initialize(): "auto" tells its pick
  }

  TuneResult run() {
    // A reference configuration that did not build or run on the device was
    // replaced as the baseline (TuneTarget::reference_params): its trials
    // first, so their invalidity is recorded.
    for (const auto& params : res_.target.rejected_references)
      if (const auto set = space_.find_set(params)) {
        const Configuration c = space_.at(space_.entries_of_set(*set).first);
        if (!find(c)) measure(c, TrialPhase::baseline);
      }
    measure(space_.baseline(), TrialPhase::baseline);
    const auto rule = space_.rule();
    if (rule && searcher_.rule_first()) searcher_.report(*rule, measure(space_.at(*rule), TrialPhase::rule));
    search();
    // A searcher that did not want the rule first: the rule for the report,
    // only if the budget has room for it.
    if (rule && !find(space_.at(*rule)) && !stop_.reached(progress()))
      searcher_.report(*rule, measure(space_.at(*rule), TrialPhase::rule));
    confirm_and_break_ties();
    answer();
    res_.wall_ms = ms_since(t0_);
    return std::move(res_);
  }

 private:
  Trial* find(const Configuration& c) {
    auto it = index_.find(c.key());
    return it == index_.end() ? nullptr : &res_.trials[it->second];
  }

  const Trial& measure(const Configuration& c, TrialPhase phase) {
    Trial t;
    if (auto cached = opt_.lookup ? opt_.lookup(c) : std::nullopt) {
      t = *cached;
      t.params = c.params;
      t.local = c.local;
      t.from_store = true;
    } else {
      t = ev_.evaluate(c, opt_.timing);
      ++res_.evaluations;
      if (opt_.on_trial) opt_.on_trial(t, phase);
    }
    index_[c.key()] = res_.trials.size();
    res_.trials.push_back(std::move(t));
    return res_.trials.back();
  }

  SearchProgress progress() const {
    return SearchProgress{res_.evaluations, static_cast<unsigned>(space_.size()),
                          Clock::now() - opt_.started.value_or(t0_)};
  }

  void search() {
    const auto rule = space_.rule();
    std::size_t skips = 0;
    for (;;) {
      if (stop_.reached(progress())) {
        res_.stop_reason = stop_.describe();
        return;
      }
      const auto s = searcher_.next();
      if (!s) {
        res_.stop_reason = "searcher done";
        return;
      }
      const Configuration c = space_.at(*s);
      if (const Trial* seen = find(c)) {
        searcher_.report(*s, *seen);
        if (++skips > space_.size() + 2) {
          res_.stop_reason = "searcher repeats itself";
          return;
        }
        continue;
      }
      skips = 0;
      build_ahead(*s);
      searcher_.report(*s, measure(c, rule == s ? TrialPhase::rule : TrialPhase::search));
    }
  }

  // With tuning parameters every parameter set is its own program: before
  // measuring one that is not built yet, the evaluator builds it and those
  // of the searcher's next proposals, several at once; and while fewer than
  // half of Evaluator::announce_ahead() announced sets are still ahead, it is handed the
  // searcher's next new ones, so a build pool (build_pool.hpp) never runs
  // dry behind a searcher that announces its order.
  void build_ahead(std::size_t entry) {
    if (space_.parameters().empty()) return;
    const std::size_t set = space_.parameter_set(entry);
    ahead_.erase(set);
    const bool fresh = built_.insert(set).second;
    const std::size_t window = ev_.announce_ahead();
    if (!fresh && ahead_.size() >= window / 2) return;
    std::vector<Configuration> batch;
    if (fresh && !stored(space_.at(entry))) batch.push_back(space_.at(entry));
    for (const std::size_t e : searcher_.upcoming(window)) {
      // Stored configurations (a resumed session) are not measured: nothing to build.
      if (!built_.insert(space_.parameter_set(e)).second || stored(space_.at(e))) continue;
      ahead_.insert(space_.parameter_set(e));
      batch.push_back(space_.at(e));
    }
    if (!batch.empty()) ev_.prepare(batch);
  }
  bool stored(const Configuration& c) const { return opt_.lookup && opt_.lookup(c).has_value(); }

  // The objective's score (TuneOptions::score; the median time without one).
  std::optional<double> score(const Trial& t) const {
    if (!t.ok() || !t.kernel.size()) return std::nullopt;
    return opt_.score ? opt_.score(t) : std::optional(t.median_ms());
  }

  // The trials that have a score, best first.
  std::vector<Trial*> ranked_ok() {
    std::vector<std::pair<double, Trial*>> scored;
    for (auto& t : res_.trials)
      if (const auto s = score(t)) scored.emplace_back(*s, &t);
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Trial*> ok;
    for (const auto& [s, t] : scored) ok.push_back(t);
    return ok;
  }

  // Confirmation, then ties. One trial's samples are taken back to back, so
  // a trial that ran at a lucky (or unlucky) moment shifts all of them: on
  // PoCL whole trials of the same shape differ by up to 2x. The first
  // confirm_rounds rounds therefore give the tiebreak_candidates best
  // configurations and the baseline one more trial each, interleaved,
  // whatever their medians; later rounds only the configurations still within
  // the tie window of the best. Samples are merged, so a configuration's
  // median is over all its trials.
  void confirm_and_break_ties() {
    // Each configuration's first-trial sample count: every extra trial takes
    // the same, so all of its trials weigh the same in the merged median.
    std::map<std::string, std::size_t> first_samples;
    for (const auto& t : res_.trials) first_samples[t.configuration().key()] = t.kernel.size();
    for (unsigned round = 0; round < opt_.tiebreak_rounds; ++round) {
      const auto tied = round_candidates(round < opt_.confirm_rounds);
      if (tied.size() < 2) break;
      for (Trial* t : tied) {
        if (stop_.out_of_time(progress())) return;  // a time limit covers the tie-break rounds too
        remeasure(*t, first_samples[t->configuration().key()]);
      }
    }
  }

  // The configurations one round re-measures: the best ones (all of them
  // while confirming, else those within the tie window), and the baseline.
  std::vector<Trial*> round_candidates(bool confirming) {
    const auto ok = ranked_ok();
    if (ok.size() < 2) return {};
    // The window: the tolerance, widened to the best's sample spread. After
    // the confirmation rounds its samples come from several trials, so the
    // spread includes the between-trial noise too.
    const double window =
        std::max(opt_.tie_tolerance, std::min(opt_.tie_tolerance_max, ok.front()->kernel.relative_iqr()));
    const double best = *score(*ok.front());
    const double limit = best + std::abs(best) * window;
    const auto within = [&](const Trial& t) { return score(t) && *score(t) <= limit; };
    std::vector<Trial*> tied;
    for (Trial* t : ok)
      if ((confirming || within(*t)) && tied.size() < opt_.tiebreak_candidates) tied.push_back(t);
    Trial* base = find(space_.baseline());
    if (base && base->ok() && (confirming || within(*base)) && std::find(tied.begin(), tied.end(), base) == tied.end())
      tied.push_back(base);
    return tied;
  }

  // One more trial of `t`'s configuration with as many samples as its first
  // trial, and no more: a noisy trial would otherwise take up to
  // max_repetitions samples and outweigh the others in the merged median.
  void remeasure(Trial& t, std::size_t first_samples) {
    const Configuration c = t.configuration();
    TimingOptions again = opt_.timing;
    again.repetitions = static_cast<unsigned>(std::max<std::size_t>(1, first_samples));
    again.min_timed_ms = 0;
    again.max_median_error = 0;
    Trial extra = ev_.evaluate(c, again);
    ++res_.tiebreak_trials;
    if (opt_.on_trial) opt_.on_trial(extra, TrialPhase::tiebreak);
    if (extra.ok()) {
      t.kernel.ms.insert(t.kernel.ms.end(), extra.kernel.ms.begin(), extra.kernel.ms.end());
    } else if (!(c == space_.baseline())) {
      t.status = extra.status;  // a flaky configuration is not an answer
      t.error = extra.error;
    }  // the baseline keeps its earlier samples: the never-slower guarantee stays
  }

  void answer() {
    const Trial& baseline = *find(space_.baseline());
    res_.baseline = baseline;
    if (const auto rule = space_.rule())
      if (const Trial* r = find(space_.at(*rule))) res_.rule = *r;
    const auto ok = ranked_ok();
    if (baseline.ok() && score(baseline)) {
      res_.best = baseline;
      if (!ok.empty() && !(ok.front()->configuration() == space_.baseline()) && *score(*ok.front()) < *score(baseline))
        res_.best = *ok.front();
    } else if (baseline.ok()) {
      res_.best = ok.empty() ? baseline : *ok.front();
    } else {
      res_.best = ok.empty() ? baseline : *ok.front();
    }
  }

  Evaluator& ev_;
  Searcher& searcher_;
  const StopCondition& stop_;
  const TuneOptions& opt_;
  const SearchSpace& space_;
  const Clock::time_point t0_ = Clock::now();
  TuneResult res_;
  std::map<std::string, std::size_t> index_;  // configuration key -> trials
  std::set<std::size_t> built_;               // parameter sets handed to Evaluator::prepare
  std::set<std::size_t> ahead_;               // those of them announced and not measured yet
};

}  // namespace

TuneResult tune(Evaluator& evaluator, Searcher& searcher, const StopCondition& stop, const TuneOptions& options) {
  return TuneRun(evaluator, searcher, stop, options).run();
}

}  // namespace wstune
