#pragma once
/// @file split_refine.hpp
/// Online refinement of a two-device split: after the measured model's
/// prediction, measure the concurrent makespan at the predicted share and
/// around it, and move by bracketing and golden-section search over the
/// first device's share with a small, fixed budget of concurrent runs,
/// keeping the best measured split. Solo calibration does not see what the
/// devices of one host do to each other when they run at once (shared memory
/// bus for uploads and read-backs, shared cores, driver threads); the search
/// does, because it measures the real thing.
///
/// The search itself is a pure function over a measuring step passed as a
/// std::function (unit-tested on synthetic makespan curves);
/// refine_split() binds it to concurrent runs of a MultiDeviceRunner.
///
/// Source: Qilin's adaptive mapping (Luk et al., MICRO 2009: calibrate, then
/// correct the split from real runs) and StarPU's history-based performance
/// models (Augonnet et al., Euro-Par 2009: keep what was measured and reuse
/// it); golden-section search (Kiefer 1953) for the one-dimensional minimum.
/// See docs/split.md.

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "wstune/split.hpp"
#include "wstune/timing.hpp"

namespace wstune {

class MultiDeviceRunner;

/// The settable splits of a range between two devices: the first device
/// gets `units_first` split units, the second the rest, each a multiple of
/// its granularity (split units; see split_granularity()).
struct RefineDomain {
  std::size_t total_units = 0;         ///< the whole range (split units)
  std::size_t granularity_first = 1;   ///< the first device's slice is a multiple of this
  std::size_t granularity_second = 1;  ///< the second device's slice is a multiple of this

  /// The first device's slice sizes that leave the second a multiple of its
  /// granularity, ascending: offset() + k·step() for k = 0 … count()−1.
  /// count() is 0 when no split aligns for both devices.
  [[nodiscard]] std::size_t count() const;
  /// Distance (split units) between neighbouring settable slices: lcm of the granularities.
  [[nodiscard]] std::size_t step() const;
  /// The smallest settable slice of the first device (split units).
  [[nodiscard]] std::size_t offset() const;
  /// The first device's slice of index `k` (< count()), split units.
  [[nodiscard]] std::size_t units(std::size_t k) const;
  /// The index whose slice is nearest `units_first` (ties: the smaller);
  /// throws UsageError when count() is 0.
  [[nodiscard]] std::size_t nearest(std::size_t units_first) const;
};

/// Budget and shape of the search.
struct RefineOptions {
  /// Distinct splits measured at most, the start and the single-device
  /// endpoints included (0: none, the search returns nothing measured).
  unsigned max_points = 8;
  /// Re-measurements that confirm a winning split against the best device
  /// alone: when the best split uses both devices, it and the better measured
  /// endpoint are each measured this many times more (alternating), and the
  /// medians decide. At most max_points + 2·confirm measurements in all.
  unsigned confirm = 3;
  /// A split using both devices is chosen only when its median beats the
  /// better measured device alone by this fraction (0 ≤ margin < 1); near
  /// ties go to the single device. The targets allow 5 % to the oracle but
  /// nothing to the better device alone, and noise decides near-ties.
  double alone_margin = 0.04;
  /// First bracketing step as a fraction of the range (0 < step ≤ 1).
  double initial_step = 0.1;
  /// A device alone is measured when its predicted solo time is at most this
  /// many times the best predicted solo time (or when no prediction is given):
  /// the endpoint that can be the better device alone is always measured.
  double endpoint_margin = 2.0;
};

/// One measured split.
struct RefineProbe {
  std::size_t units_first = 0;  ///< the first device's slice (split units)
  /// Measured concurrent makespan (ms); +infinity when the run failed.
  double makespan_ms = 0;
  /// Why it was measured: "start", "alone", "bracket", "golden", "explore" or "confirm"
  /// (a repeated measurement of a split already probed).
  std::string role;
  friend bool operator==(const RefineProbe&, const RefineProbe&) = default;
};

/// What the search found.
struct RefineOutcome {
  /// The best measured split: the first device's slice (split units).
  /// Meaningless when found() is false.
  std::size_t units_first = 0;
  /// Its measured makespan (ms; the median of its measurements); +infinity
  /// when nothing ran.
  double makespan_ms = 0;
  /// Every measurement, in measuring order (each split once, except the
  /// confirming ones).
  std::vector<RefineProbe> probes;
  /// The better of the measured single-device endpoints (ms, median of its
  /// measurements), if any ran.
  std::optional<double> best_alone_ms;
  /// True when at least one probe ran.
  [[nodiscard]] bool found() const noexcept;
};

/// The search. Measures `start_units_first` (snapped to the domain), then the
/// single-device endpoints that may be the better device alone
/// (`predicted_alone_ms` = {first alone, second alone}, solo predictions in ms
/// such as DeviceCalibration::predict_ms at the full size, compared with
/// RefineOptions::endpoint_margin; both measured without them), then brackets
/// the minimum around the best point so far (steps growing by the golden
/// ratio from initial_step of the range) and narrows the bracket by
/// golden-section probes (while a device alone leads, it bisects the widest
/// gap between measured splits instead) until the budget (max_points distinct
/// splits) is spent or the bracket has no untried split left. A lowest split
/// that uses both devices is then confirmed against the better endpoint
/// (RefineOptions::confirm) and kept only if its median beats that device
/// alone by RefineOptions::alone_margin; otherwise the device alone is the
/// result. Since the measured endpoints are candidates, the result is never
/// measured worse than the best measured single device. `measure(units_first)`
/// returns the concurrent makespan in ms (a non-finite or negative value, or an
/// exception derived from wstune::Error, marks a failed split, which is never
/// chosen; other exceptions propagate). Throws UsageError when the domain is
/// empty (no split aligns) or the options are out of range.
RefineOutcome refine_split_search(const RefineDomain& domain, std::size_t start_units_first,
                                  const std::function<double(std::size_t units_first)>& measure,
                                  const RefineOptions& options = {},
                                  std::optional<std::pair<double, double>> predicted_alone_ms = std::nullopt);

/// JSON form of an outcome: {"units_first","makespan_ms","best_alone_ms"
/// (null when none),"probes":[{"units_first","makespan_ms" (null when failed),"role"}]}.
nlohmann::json to_json(const RefineOutcome& o);
/// Inverse of to_json(RefineOutcome); throws nlohmann::json::exception when malformed.
RefineOutcome refine_outcome_from_json(const nlohmann::json& j);

/// refine_split() on a MultiDeviceRunner.
struct SplitRefinement {
  std::vector<Block> model_blocks;  ///< the measured model's prediction (the search's start)
  std::vector<Block> blocks;        ///< the best measured split
  RefineOutcome search;             ///< every probe
  unsigned concurrent_rounds = 0;   ///< rounds run on both devices at once, warm-ups included
  double elapsed_ms = 0;            ///< wall clock of the whole refinement (ms)
};

/// The measured model refined online for two devices: blocks from `cal`
/// (measured_blocks), then refine_split_search() where each probe is
/// `runner.run()` of that split with `timing` (warm-up, then the median of
/// timing.repetitions concurrent rounds, every probe's output verified; a
/// failed or wrong split is never chosen). Folds what it learned into `cal`:
/// each used device's concurrency_scale is set from its wall time at the best
/// split (observe_concurrent). The solo predictions of `cal` at the full size
/// decide which single-device endpoints are measured. Throws UsageError
/// unless the runner has two devices, `cal` and `locals` have two entries
/// and the granularities admit a split; Error when no probe ran correctly
/// (the message carries the last failure).
SplitRefinement refine_split(MultiDeviceRunner& runner, Calibration& cal, const std::vector<LocalSize>& locals,
                             const TimingOptions& timing, const RefineOptions& options = {});

/// The two blocks of a split giving the first device `units_first` of
/// `total_units` along `dim`.
std::vector<Block> two_blocks(unsigned dim, std::size_t units_first, std::size_t total_units);

}  // namespace wstune
