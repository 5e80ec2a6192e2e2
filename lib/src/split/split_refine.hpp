#pragma once
/// @file split_refine.hpp
/// Online refinement of a split over any number of devices, and the choice
/// of the devices it uses. After the measured model's prediction it measures
/// the concurrent makespan at the prediction and at each single device that
/// can win alone; balances the devices by the times they showed (each
/// device's share towards where it would finish with the others); tries the
/// best split without each device; then searches lines through the best
/// split so far (two devices: the whole range; more: each device against the
/// others and each pair, within shrinking windows) by bracketing and
/// golden-section narrowing, with a fixed budget of concurrent runs. The
/// winner is confirmed against its rivals and the best split of every
/// smaller device set and kept only when it beats a set with fewer devices
/// by a margin, so the result is never measured worse than the best single
/// device. Solo calibration does not see what the devices of one host do to
/// each other when they run at once (shared memory bus for uploads and
/// read-backs, shared cores, driver threads); the search does, because it
/// measures the real thing.
///
/// The search itself is a pure function over a measuring step passed as a
/// std::function (unit-tested on synthetic makespan functions of 2 to 4
/// devices); refine_split() binds it to concurrent runs of a
/// MultiDeviceRunner. A makespan-only measuring step on two devices gives
/// the golden-section refinement of issue #5.
///
/// Source: Qilin's adaptive mapping (Luk et al., MICRO 2009: calibrate, then
/// correct the split from real runs) and StarPU's history-based performance
/// models (Augonnet et al., Euro-Par 2009: keep what was measured and reuse
/// it); golden-section search (Kiefer 1953) on each line; coordinate search
/// with shrinking steps (pattern search, Hooke & Jeeves 1961: the
/// one-against-the-others lines step off the ridges of the makespan's max).
/// See docs/split.md.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "split/split.hpp"
#include "wstune/timing.hpp"

namespace wstune {

class MultiDeviceRunner;

/// The settable splits of a sub-range between two devices (a line of the
/// search: the pair's slices sum to total_units, the others' are fixed): the
/// first device gets `units_first`, the second the rest, each a multiple of
/// its granularity (split units).
struct RefineDomain {
  std::size_t total_units = 0;         ///< the pair's range (split units)
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
  /// endpoints included (0: none, the search returns nothing measured). See
  /// refine_points() for a default by device count.
  unsigned max_points = 8;
  /// Re-measurements that confirm the choice: the best device alone and,
  /// for each device count, its `rivals` best splits within confirm_window
  /// of the best makespan measured are each measured this many times more
  /// (interleaved), when there are two or more such candidates, and the
  /// medians decide. At most max_points + confirm·rivals·devices
  /// measurements in all.
  unsigned confirm = 3;
  /// A split using several devices is chosen over the best device alone
  /// only when its median beats that one's by this fraction (0 ≤ margin <
  /// 1); near ties go to the single device. The targets allow 5 % to the
  /// oracle but nothing to the best device alone, and noise decides near-ties.
  double alone_margin = 0.04;
  /// A split using more devices is chosen over the best split using fewer
  /// (two or more) only when its median beats that one's by this fraction
  /// (0 ≤ margin < 1): two GPUs and a CPU must beat the two GPUs.
  double subset_margin = 0.02;
  /// How many of the best splits of each device count are confirmed (≥ 1);
  /// the lowest median wins. Near the optimum several splits differ by less
  /// than the noise, and the lowest single sample is often a lucky one.
  unsigned rivals = 2;
  /// Candidates for confirmation other than the best device alone: splits
  /// whose single measurement is within this fraction of the best (≥ 0).
  double confirm_window = 0.25;
  /// First bracketing step on a line as a fraction of the line's range (0 < step ≤ 1).
  double initial_step = 0.1;
  /// Three or more devices: each round of lines searches within ±step of
  /// each line's range around the best split, the step starting at
  /// initial_step and multiplied by this per round (0 < shrink ≤ 1).
  double step_shrink = 0.5;
  /// Three or more devices: new splits measured on one line before the
  /// search turns to the next line (≥ 1); the line is revisited in later
  /// rounds. Two devices have one line, searched to the end.
  unsigned line_points = 3;
  /// Balancing (each device's share towards where it would finish with the
  /// others at the rate it showed) stops when it would move no device by
  /// more than this fraction of the range (0 ≤ tol < 1).
  double balance_tolerance = 0.002;
  /// A device alone is measured when its predicted solo time is at most this
  /// many times the best predicted solo time (or when no prediction is given):
  /// the endpoint that can be the better device alone is always measured.
  double endpoint_margin = 2.0;
};

/// The default budget (RefineOptions::max_points) for `devices` devices: 8
/// for two (issue #5's replay), 10 more per further device (a round of
/// lines: one-vs-rest and pairs), e.g. 18 for three and 28 for four.
unsigned refine_points(std::size_t devices) noexcept;

/// What one concurrent run of a split measured.
struct SplitMeasurement {
  /// The concurrent makespan (ms); non-finite or negative when the run failed.
  double makespan_ms = 0;
  /// Each device's own time in the run (ms; upload + kernel + read-back, 0
  /// for a device without a slice), in device order; empty when unknown.
  /// The search balances these (see refine_split_search()).
  std::vector<double> device_ms;
  SplitMeasurement() = default;
  /// A makespan alone (implicit, so a measuring step may return a double).
  SplitMeasurement(double makespan) : makespan_ms(makespan) {}  // NOLINT(google-explicit-constructor)
  /// A makespan and each device's time.
  SplitMeasurement(double makespan, std::vector<double> devices)
      : makespan_ms(makespan), device_ms(std::move(devices)) {}
};

/// One measured split.
struct RefineProbe {
  Shares units;  ///< each device's slice (split units)
  /// Measured concurrent makespan (ms); +infinity when the run failed.
  double makespan_ms = 0;
  /// Why it was measured: "start", "alone", "bracket", "golden", "explore" or
  /// "confirm" (a repeated measurement of a split already probed).
  std::string role;
  friend bool operator==(const RefineProbe&, const RefineProbe&) = default;
};

/// What the search found.
struct RefineOutcome {
  /// The chosen split (each device's slice, split units); empty when found() is false.
  Shares units;
  /// Its measured makespan (ms; the median of its measurements); +infinity
  /// when nothing ran.
  double makespan_ms = 0;
  /// Every measurement, in measuring order (each split once, except the
  /// confirming ones).
  std::vector<RefineProbe> probes;
  /// The best of the measured single-device endpoints (ms, median of its
  /// measurements), if any ran.
  std::optional<double> best_alone_ms;
  /// Which device that was (index), when best_alone_ms is set.
  std::optional<std::size_t> best_alone_device;
  /// True when at least one probe ran.
  [[nodiscard]] bool found() const noexcept;
  /// The chosen device set: device_set(units).
  [[nodiscard]] std::vector<std::size_t> devices() const { return device_set(units); }
  friend bool operator==(const RefineOutcome&, const RefineOutcome&) = default;
};

/// The search. Measures `start` (snapped to the lattice), then each device
/// alone that may be the best single device (`predicted_alone_ms`: one solo
/// prediction per device in ms, such as DeviceCalibration::predict_ms at the
/// full size, compared with RefineOptions::endpoint_margin; all are measured
/// without them, the predicted fastest first). Then, when the measurements
/// carry each device's time (SplitMeasurement::device_ms), it balances: from
/// the best split using several devices it measures the split where each
/// device, at the rate it showed there (slice ÷ time), would finish with the
/// others, narrowing the segment by golden section when that is not better,
/// until a move falls below balance_tolerance. Three or more devices: the
/// best split without each of its devices in turn ("drop", smallest slice
/// first; balancing resumes from a better one). Then lines through the best
/// split so far: two devices have one line, the whole range; three or more
/// have, per round, one line per device (that device against all others,
/// which keep their proportions) and one per pair (work moved between the
/// two), each within ±initial_step of its range (shrinking by step_shrink per
/// round) and searched for at most line_points new splits. On a line the
/// minimum is bracketed (steps growing by the golden ratio) and narrowed by
/// golden-section probes; while a device alone leads, the widest gap between
/// measured splits is bisected instead. The search ends when the budget
/// (max_points distinct splits) is spent or a whole round finds no untried
/// split next to the best. Choice of the device set (RefineOptions::confirm,
/// rivals, confirm_window, alone_margin, subset_margin): the best device
/// alone and each device count's best splits near the best makespan are
/// measured again and the medians decide, a split with more devices winning
/// only by the margin. Since the best measured single device is always a
/// candidate, the result is never measured worse than it (by median).
/// `measure(units)` returns the concurrent makespan in ms and optionally each
/// device's time (a non-finite or negative makespan, or an exception derived
/// from wstune::Error, marks a failed split, which is never chosen; other
/// exceptions propagate). Throws UsageError when the lattice is empty (no
/// split aligns), `start` or the predictions have the wrong size, or the
/// options are out of range.
RefineOutcome refine_split_search(const SplitLattice& lattice, const Shares& start,
                                  const std::function<SplitMeasurement(const Shares& units)>& measure,
                                  const RefineOptions& options = {},
                                  std::optional<std::vector<double>> predicted_alone_ms = std::nullopt);

/// JSON form of an outcome: {"units":[…],"makespan_ms","best_alone_ms"
/// (null when none),"best_alone_device" (null when none),"probes":[{"units":[…],
/// "makespan_ms" (null when failed),"role"}]}.
nlohmann::json to_json(const RefineOutcome& o);
/// Inverse of to_json(RefineOutcome); throws nlohmann::json::exception when malformed.
RefineOutcome refine_outcome_from_json(const nlohmann::json& j);

/// refine_split() on a MultiDeviceRunner.
struct SplitRefinement {
  std::vector<Block> model_blocks;  ///< the measured model's prediction (the search's start)
  std::vector<Block> blocks;        ///< the chosen split
  RefineOutcome search;             ///< every probe
  unsigned concurrent_rounds = 0;   ///< rounds run on the devices at once, warm-ups included
  double elapsed_ms = 0;            ///< wall clock of the whole refinement (ms)
};

/// The measured model refined online, for two or more devices: blocks from
/// `cal` (measured_blocks), then refine_split_search() where each probe is
/// `runner.run()` of that split with `timing` (warm-up, then the median of
/// timing.repetitions concurrent rounds, every probe's output verified; a
/// failed or wrong split is never chosen). Folds what it learned into `cal`:
/// when the chosen split uses two or more devices, each of them gets its
/// concurrency_scale from its wall time there (observe_concurrent). The solo
/// predictions of `cal` at the full size decide which single devices are
/// measured. Throws UsageError unless the runner, `cal` and `locals` have
/// the same number (≥ 2) of devices and the granularities admit a split;
/// Error when no probe ran correctly (the message carries the last failure).
SplitRefinement refine_split(MultiDeviceRunner& runner, Calibration& cal, const std::vector<LocalSize>& locals,
                             const TimingOptions& timing, const RefineOptions& options = {});

}  // namespace wstune
