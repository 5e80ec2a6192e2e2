#pragma once
/// @file split_plan.hpp
/// How the master splits one job's NDRange over its workers: a split model
/// gives each worker a fraction, the fractions become contiguous blocks along
/// the split dimension (rows for 2-D kernels by default, paper §3.1.1).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wstune/device.hpp"
#include "wstune/kernel.hpp"

namespace wstune::daemon {

/// One worker as the split sees it.
struct SplitWorker {
  int rank = 0;         ///< MPI rank
  DeviceInfo device;    ///< its device model
  /// Its calibration for this kernel (split.hpp DeviceCalibration JSON), for
  /// the `measured` model; null when there is none.
  nlohmann::json calibration;
  /// Its fixed cost per job of this kernel, size and run count (ms),
  /// learned from its earlier measured jobs (observed_fixed_ms()); 0 = none.
  double fixed_ms = 0;
};

/// A job's split: one block per worker (same order; an empty block means the
/// worker gets nothing), the fractions asked for and the dimension.
struct SplitPlan {
  std::string model;                ///< the model used
  unsigned dim = 0;                 ///< 0 = x (columns / elements), 1 = y (rows)
  std::vector<double> fractions;    ///< the model's fractions, summing to 1
  std::vector<Block> blocks;        ///< aligned blocks covering the whole range
  std::string note;                 ///< e.g. why a model fell back
};

/// The split dimension of `spec` for direction "auto" (rows, dim 1, for 2-D
/// kernels as the paper does; dim 0 for 1-D), "x" or "y" (y on a 1-D kernel
/// throws UsageError).
unsigned split_dim(const KernelSpec& spec, const std::string& direction);

/// Fractions of the split model `model` over `workers` for problem `p`:
/// even (1/n each), proportional (to total PEs, the paper's §4 baseline),
/// pe-ratio (the paper's §3.1 corrected model, split.hpp). Throws UsageError
/// for an unknown model; `measured` has no fractions (see plan_split()).
std::vector<double> split_fractions(const std::string& model, const KernelSpec& spec, const Problem& p,
                                    unsigned dim, const std::vector<SplitWorker>& workers);

/// The blocks of `model`: fractions through align_blocks() (split.hpp), or
/// measured_blocks() for `measured`, with a granularity of 16 work-items
/// where the problem divides into it (so the rule's multiples of 16 stay
/// possible, paper §3.2.3), else the kernel's smallest (split_granularity())
/// where the problem divides into that, else one unit (a sort of odd length:
/// sort pads every block to a power of two).
/// `measured` predicts a job that runs the kernel `kernel_runs` times per
/// upload and read-back (warm-up + repetitions; for_kernel_runs()), each
/// worker's fixed cost per job (SplitWorker::fixed_ms) added to its
/// non-empty block, so a worker whose fixed cost exceeds what its share
/// would save gets nothing.
/// Throws UsageError as split_fractions() does.
SplitPlan plan_split(const std::string& model, const std::string& direction, const KernelSpec& spec,
                     const Problem& p, const std::vector<SplitWorker>& workers, unsigned kernel_runs = 1);

/// The fixed cost per job one worker showed in a finished `measured` job:
/// `answer_ms` (the job's start to its result at the master, less one-time
/// costs such as a build or input generation) minus the measured model's
/// prediction for its block `b` without a fixed cost (observe_job() on its
/// calibration for `kernel_runs` runs). nullopt without a calibration or for
/// an empty block.
std::optional<double> observed_fixed_ms(const KernelSpec& spec, const Problem& p, const SplitWorker& w, unsigned dim,
                                        const Block& b, unsigned kernel_runs, double answer_ms);

}  // namespace wstune::daemon
