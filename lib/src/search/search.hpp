#pragma once
/// @file search.hpp
/// Measured search over a kernel's configurations (tuning parameter values
/// and local work size / group shape), never worse than the baseline (the
/// driver's default NULL, or a described kernel's reference configuration):
/// strategies behind a small Searcher interface, stop conditions behind
/// StopCondition (after KTT's searcher and stop-condition interfaces), and
/// tune(), which measures the baseline, the paper's rule and what the
/// strategy proposes, confirms the fastest and resolves ties with more
/// trials, and answers the baseline unless something is faster.
/// See docs/tuning.md.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evaluate/trial.hpp"
#include "space/search_space.hpp"
#include "wstune/timing.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// Picks the next configuration to measure. One instance serves one tune() call.
class Searcher {
 public:
  virtual ~Searcher() = default;
  /// "exhaustive", "random", "guided", "rule", "genetic", "annealing",
  /// "differential", "portfolio", "bayes", or "auto" ("auto:PICK" once
  /// initialized).
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Called once before next(): the configurations (search_space.hpp; it
  /// outlives the search and holds the baseline and the paper's rule) and
  /// the target (device model, NDRange, the kernel's priority), for
  /// searchers with a prior.
  virtual void initialize(const SearchSpace& space, const TuneTarget& target) = 0;
  /// True (the default): tune() measures the paper's rule right after NULL,
  /// before next(). False: the searcher proposes the rule itself when it
  /// wants it; if the search ends without it, tune() measures it afterwards
  /// only when the stop condition still allows one more evaluation (so a
  /// budget of 2 can go to NULL and the searcher's best first guess).
  [[nodiscard]] virtual bool rule_first() const { return true; }
  /// The index (in the space) of the next configuration to measure, or
  /// nullopt when there is nothing left to try. Configurations already
  /// reported are skipped by tune() without cost.
  virtual std::optional<std::size_t> next() = 0;
  /// Configuration `entry`'s trial (the rule's too, and cached ones).
  virtual void report(std::size_t entry, const Trial& trial) = 0;
  /// Up to `n` indices the searcher will propose next, as far as it knows
  /// without further reports (tune() builds their programs ahead, several at
  /// once); empty by default.
  [[nodiscard]] virtual std::vector<std::size_t> upcoming(std::size_t /*n*/) const { return {}; }
};

/// Every configuration of the space in order.
std::unique_ptr<Searcher> make_exhaustive_searcher();
/// Configurations in a seeded random order (without repetition).
std::unique_ptr<Searcher> make_random_searcher(std::uint64_t seed);
/// Guided: first the best shapes of prior_order() at three work-group
/// sizes (the target size, half and double or a quarter of it; on a CPU
/// device an eighth and eight times it), then the
/// paper's rule (on a CPU device with a 1-D NDRange the rule comes first:
/// the smallest group that fills the SIMD lanes, the other end of the size
/// range from PoCL's large NULL choice), then best-first hill-climbing from the fastest measured
/// configurations over their neighbours (SearchSpace::neighbours: the next
/// smaller and larger divisor in x, y, z and their combinations, the
/// same-size reshapes, and one step in one tuning parameter), moves that
/// keep y and z first. The seeds are taken in the baseline's parameter set;
/// a space with parameters adds two seeded random configurations.
/// rule_first() is false: under a budget of two evaluations it measures
/// NULL and its first seed.
std::unique_ptr<Searcher> make_guided_searcher(std::uint64_t seed);

/// Preferred work-group size of the prior (work-items): 256 on GPUs (a
/// multiple of the warp/wavefront that leaves several groups resident per
/// compute unit: NVIDIA CUDA C++ Best Practices Guide §10.2 "Thread and
/// Block Heuristics", AMD ROCm HIP performance guidelines), and 256 on
/// CPUs as well (PoCL runs a work-group as a vectorised work-item loop on
/// one thread, so small groups pay the per-group cost), capped by the
/// largest shape in the space.
std::size_t prior_group_size(const TuneTarget& target);

/// The shapes of `space` ordered by a device-aware prior score, most
/// promising first (ties broken by larger x, then smaller y). The score adds:
/// the SIMD efficiency loss of a group size that is not a multiple of the
/// device's preferred work-group multiple (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
/// OpenCL 1.2 §5.7.3; 32 assumed on a GPU without one); the log2 distance
/// of the group size from prior_group_size(); and, for 2-D shapes, on a GPU
/// the distance of x from 64 with a penalty for x below the multiple
/// (coalesced rows, memory is row-major along x), on a CPU the distance of
/// x from the multiple (PoCL vectorises the work-item loop along x).
/// A prior, not a measurement: the measured search decides.
std::vector<Extent> prior_order(const std::vector<Extent>& space, const TuneTarget& target);
/// Only the paper's rule (and the NULL baseline): no search.
std::unique_ptr<Searcher> make_rule_searcher();
/// By name: "auto" (the default: picks by the size of the space),
/// "exhaustive", "random", "guided", "rule", and the strategies of
/// strategies.hpp ("genetic", "annealing", "differential", "portfolio",
/// "bayes"); throws UsageError
/// listing the names otherwise.
std::unique_ptr<Searcher> make_searcher(std::string_view name = "auto", std::uint64_t seed = 1);
/// Warm start: `inner` with `seeds` proposed first, in order (each mapped
/// onto the space: the same configuration, else its parameter set's first
/// shape; seeds not in the space are skipped), then `inner`'s own
/// proposals (one that repeats a seed tune() skips without cost). `inner` is told of every trial (report()), so a
/// strategy that climbs from or breeds the fastest measured configurations (guided, genetic, annealing, differential,
/// bayes) starts from the seeds that proved fast; its name and rule_first() are `inner`'s, so a session keeps its
/// strategy. `inner` itself when `seeds` is empty. An exhaustive search gains nothing from seeds: autotune() gives it
/// none.
std::unique_ptr<Searcher> make_seeded_searcher(std::unique_ptr<Searcher> inner, std::vector<Configuration> seeds);
/// The names make_searcher() knows, for help and error messages.
std::string_view strategy_names() noexcept;

/// Where a tune() stands, for stop conditions and progress lines.
struct SearchProgress {
  unsigned evaluations = 0;  ///< configurations measured so far (NULL and the rule included)
  unsigned space_size = 0;   ///< configurations in the space (+1 for the baseline is the exhaustive count)
  std::chrono::steady_clock::duration elapsed{};  ///< since the tune started (TuneOptions::started, else tune()'s call)
};

/// When to stop searching. The baseline always runs; the rule runs first
/// for searchers with rule_first(), otherwise only within the budget; the
/// confirmation and tie rounds run after the search whatever an evaluation
/// count says (at most TuneOptions::tiebreak_rounds × (tiebreak_candidates +
/// 1) trials, counted in TuneResult::tiebreak_trials, not in evaluations),
/// but not past a time limit: a time limit is the wall time of the whole
/// tune, its tie-break rounds included (out_of_time()).
class StopCondition {
 public:
  virtual ~StopCondition() = default;
  /// True when the search must stop now.
  [[nodiscard]] virtual bool reached(const SearchProgress& p) const = 0;
  /// True when a time limit in the condition has passed: nothing more is
  /// measured, confirmation and tie rounds included. False by default.
  [[nodiscard]] virtual bool out_of_time(const SearchProgress& /*p*/) const { return false; }
  /// e.g. "20 evaluations" or "10 s".
  [[nodiscard]] virtual std::string describe() const = 0;
};

/// Stops after `n` evaluations.
std::unique_ptr<StopCondition> max_evaluations(unsigned n);
/// Stops once `limit` has elapsed (SearchProgress::elapsed), the confirmation
/// and tie rounds too (out_of_time()).
std::unique_ptr<StopCondition> time_limit(std::chrono::steady_clock::duration limit);
/// Stops when either stops.
std::unique_ptr<StopCondition> either(std::unique_ptr<StopCondition> a, std::unique_ptr<StopCondition> b);
/// Never stops (the searcher runs out instead).
std::unique_ptr<StopCondition> never_stop();

/// Why a trial was run.
enum class TrialPhase {
  baseline,  ///< the driver's choice (NULL)
  rule,      ///< the paper's rule
  search,    ///< proposed by the searcher
  tiebreak   ///< an extra trial of a measured configuration (confirmation and tie rounds)
};
/// "baseline", "rule", "search", "tiebreak".
std::string_view to_string(TrialPhase p) noexcept;

/// How tune() measures.
struct TuneOptions {
  /// Warm-up and repetitions of each trial: at least 5 samples, more until
  /// they sum to 2 ms, and while the median's estimated relative standard
  /// error is above 1 % until they sum to 50 ms (at most 100 samples), so a
  /// 10 µs kernel and a noisy short one get a stable median.
  TimingOptions timing{1, 5, 2.0, 100, 0.01, 50.0};
  /// Medians within this fraction of the best are ties (at least).
  double tie_tolerance = 0.03;
  /// The tie window widens to the best configuration's sample spread (its
  /// merged samples' relative_iqr(), which after the confirmation rounds
  /// spans several trials) up to this fraction: medians closer than the
  /// measurement resolves are ties too (on PoCL one trial's samples spread
  /// 5–10 %, and the same shape re-measured in another process differs by a
  /// median 4–7 %, 12–29 % on a 2-vCPU machine).
  double tie_tolerance_max = 0.10;
  /// At most this many rounds of extra trials after the search (0: none,
  /// the first measurement of each shape decides). An extra trial takes as
  /// many samples as the configuration's first trial (timing.repetitions =
  /// that count, no adaptive repetitions), so every trial weighs the same
  /// in the merged median.
  unsigned tiebreak_rounds = 8;
  /// The first this many of those rounds confirm: the tiebreak_candidates
  /// fastest configurations (NULL counts if it is among them) and NULL get
  /// one more trial each, interleaved, whatever
  /// their medians (one trial's samples share its moment's luck: on PoCL
  /// whole trials of one shape differ by up to 2×). Later rounds only
  /// re-measure shapes within the tie window.
  unsigned confirm_rounds = 2;
  /// At most this many of the fastest configurations get an extra trial per
  /// round; NULL is added when it is not among them.
  unsigned tiebreak_candidates = 4;
  /// What decides the best configuration (metric/metric.hpp,
  /// objective_score()): a trial's score, lower is better, nullopt where it
  /// has none. Unset: the median kernel time. The searchers steer by time
  /// whatever it is; the confirmation rounds, the tie window (a fraction of
  /// the best score's magnitude) and the answer use the score, and the
  /// baseline stays the answer unless a configuration scores better (a
  /// baseline without a score gives way to the best that has one).
  std::function<std::optional<double>(const Trial&)> score = {};
  /// Called after every measured trial (every phase), e.g. to store it.
  std::function<void(const Trial&, TrialPhase)> on_trial;
  /// "Already measured" lookup: a returned Trial is used instead of measuring
  /// (it is not counted as an evaluation and on_trial is not called for it).
  std::function<std::optional<Trial>(const Configuration&)> lookup;
  /// When the tune began, for a time limit (SearchProgress::elapsed counts
  /// from it): a caller that sets up the evaluator first (a worker process,
  /// the reference run, builds) passes its own start, so the setup counts
  /// against the budget too. Unset: tune()'s call.
  std::optional<std::chrono::steady_clock::time_point> started;
};

/// The answer of tune().
struct TuneResult {
  TuneTarget target;             ///< what was tuned
  std::string strategy;          ///< the searcher's name
  std::size_t space_size = 0;    ///< configurations in the search space (the baseline excluded)
  Trial best;                    ///< the answer (the baseline when nothing beats it), with all its samples
  Trial baseline;                ///< the baseline: the driver's choice (NULL), or the reference configuration
  std::optional<Trial> rule;     ///< the paper's rule, if it has a shape
  std::vector<Trial> trials;     ///< every distinct configuration, merged samples, in first-measured order
  unsigned evaluations = 0;      ///< configurations measured (lookups excluded)
  unsigned tiebreak_trials = 0;  ///< extra trials of measured configurations (confirmation and tie rounds)
  double wall_ms = 0;            ///< wall time of tune() (ms)
  std::string stop_reason;       ///< "space exhausted", "searcher done" or the stop condition
  /// best / baseline median (≤ 1 whenever the baseline ran); nullopt if either failed.
  [[nodiscard]] std::optional<double> ratio_to_baseline() const;
  /// best / rule median; nullopt without a correct rule trial.
  [[nodiscard]] std::optional<double> ratio_to_rule() const;
};

/// Tunes `evaluator`'s configurations: measures the baseline
/// (SearchSpace::baseline), the paper's rule (after the search instead, and
/// only within the budget, for a searcher whose rule_first() is false), the
/// searcher's proposals until `stop` or the searcher ends; then the fastest
/// configurations and the baseline get options.confirm_rounds more
/// interleaved trials, and configurations whose medians are within the tie
/// window of the best (options.tie_tolerance, widened to the best's own
/// sample spread up to options.tie_tolerance_max) get more samples (samples
/// are merged) until one is clearly best or the rounds run out; the answer is
/// the fastest median, and the baseline unless that is strictly faster than
/// the baseline's. Failing trials are kept as data.
/// Throws only what the evaluator's constructor would (never for a trial).
TuneResult tune(Evaluator& evaluator, Searcher& searcher, const StopCondition& stop, const TuneOptions& options = {});

}  // namespace wstune
