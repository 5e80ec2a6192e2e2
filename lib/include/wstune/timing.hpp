#pragma once

#include "wstune/export.h"
/// @file timing.hpp
/// Timing samples. Kernel times come from OpenCL profiling events
/// (CL_PROFILING_COMMAND_END − CL_PROFILING_COMMAND_START, OpenCL 1.2
/// §5.12), after warm-up runs; every sample is kept.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <CL/opencl.hpp>

namespace wstune {

/// Repeated measurements of one quantity in milliseconds.
struct WSTUNE_EXPORT Samples {
  std::vector<double> ms;  ///< every sample, in the order taken (ms)
  /// The median (mean of the two middle samples for even counts); 0 if empty.
  [[nodiscard]] double median() const;
  /// The smallest sample; 0 if empty.
  [[nodiscard]] double min() const;
  /// The largest sample; 0 if empty.
  [[nodiscard]] double max() const;
  /// The q-quantile, q in [0, 1], interpolated linearly between order
  /// statistics (Hyndman & Fan type 7, as R and NumPy by default); 0 if
  /// empty. Throws std::invalid_argument for q outside [0, 1].
  [[nodiscard]] double quantile(double q) const;
  /// Interquartile range over the median, (q3 − q1) / median: the spread of
  /// one trial's samples as a fraction; 0 if empty or the median is 0.
  [[nodiscard]] double relative_iqr() const;
  /// Number of samples.
  [[nodiscard]] std::size_t size() const noexcept { return ms.size(); }
};

/// `bytes` moved in the median of `s` (ms), as GB/s (10^9 bytes per
/// second); 0 without samples or with a median of 0.
WSTUNE_EXPORT double gbps(std::size_t bytes, const Samples& s);

/// How to time a configuration.
struct TimingOptions {
  unsigned warmup = 1;       ///< untimed runs first (PoCL compiles a new local size on first use)
  unsigned repetitions = 5;  ///< timed runs, each one sample (the minimum when min_timed_ms is set)
  /// Adaptive repetitions: after `repetitions` samples, keep taking samples
  /// until their sum reaches this many ms (or max_repetitions). Short
  /// kernels (≈10 µs on a GPU) need hundreds of samples for a median
  /// stable to 1 %; long ones keep `repetitions`. 0 = off.
  double min_timed_ms = 0;
  /// Upper bound on timed runs when min_timed_ms or max_median_error is set
  /// (0 = repetitions).
  unsigned max_repetitions = 0;
  /// Noise-adaptive repetitions: after `repetitions` samples (and
  /// min_timed_ms), keep taking samples while the estimated relative
  /// standard error of the median, median_error(), is above this fraction
  /// (or max_repetitions). On a quiet GPU it adds nothing; a 0.4 ms kernel
  /// on a 16-thread PoCL device whose samples spread 40 % gets up to
  /// max_repetitions instead of 5. 0 = off.
  double max_median_error = 0;
  /// Noise-driven samples (max_median_error) stop once the samples sum to
  /// this many ms, so a noisy 35 ms kernel keeps its minimum count while a
  /// noisy 0.4 ms one gets up to max_repetitions. 0 = no time bound.
  double max_timed_ms = 0;
  /// The last warm-up run is timed too; when its kernel time is within this
  /// fraction of the first timed sample's, it had nothing left to warm (a
  /// build's first use, first-touch mappings and clocks show as a slower
  /// first run) and counts as a sample, so a long kernel pays one run less
  /// per trial. Only with repetitions ≥ 2 (the count of samples stays
  /// repetitions when nothing adaptive adds more). 0 = off: warm-ups never count.
  double steady_warmup = 0.03;

  /// Whether a warm-up of `warmup_ms` before a first sample of `first_ms`
  /// counts as a sample (steady_warmup; both ms, from profiling events).
  [[nodiscard]] bool warmup_counts(double warmup_ms, double first_ms) const noexcept {
    return steady_warmup > 0 && repetitions >= 2 && warmup_ms > 0 && first_ms > 0 &&
           std::abs(warmup_ms - first_ms) <= steady_warmup * first_ms;
  }

  /// Estimated relative standard error of the median of `n` samples whose
  /// interquartile range is `relative_iqr` of their median: 0.93 · IQR/√n,
  /// from SE(median) ≈ 1.2533 σ/√n and σ ≈ IQR/1.349 for a normal
  /// distribution (Kendall & Stuart, "The Advanced Theory of Statistics",
  /// vol. 1, §10.10). 0 when n is 0.
  [[nodiscard]] static double median_error(double relative_iqr, std::size_t n) noexcept {
    return n ? 0.93 * relative_iqr / std::sqrt(static_cast<double>(n)) : 0;
  }
  /// Whether another sample is due after `taken` samples summing to
  /// `sum_ms` whose relative_iqr() is `relative_iqr` (only read when
  /// max_median_error is set).
  [[nodiscard]] bool more(std::size_t taken, double sum_ms, double relative_iqr = 0) const noexcept {
    if (taken < repetitions) return true;
    if (taken >= std::max(repetitions, max_repetitions)) return false;
    if (min_timed_ms > 0 && sum_ms < min_timed_ms) return true;
    return max_median_error > 0 && (max_timed_ms <= 0 || sum_ms < max_timed_ms) &&
           median_error(relative_iqr, taken) > max_median_error;
  }
};

/// Milliseconds of wall clock since `t0` (std::chrono::steady_clock).
WSTUNE_EXPORT double ms_since(std::chrono::steady_clock::time_point t0);

/// ms between the START of `first` and the END of `last` (profiling events of
/// a queue created with CL_QUEUE_PROFILING_ENABLE). Throws ClError.
WSTUNE_EXPORT double event_span_ms(const cl::Event& first, const cl::Event& last);

}  // namespace wstune
