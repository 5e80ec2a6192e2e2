#pragma once
// Measures an app's kernel with its own arguments without changing what the
// app computes (private to the library): snapshots the buffers the kernel
// may write, verifies every configuration's output against a reference run
// (NULL's), restores the buffers. See docs/app.md.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "app/app_kernel.hpp"
#include "evaluate/trial.hpp"
#include "wstune/tuner.hpp"

namespace wstune::detail {

/// One buffer the kernel may write.
struct WrittenArg {
  cl_uint index = 0;        ///< the kernel argument
  cl_mem buffer = nullptr;  ///< the app's buffer (not owned)
  char element = 'b';       ///< 'f' float, 'd' double, 'b' bytes (how outputs are compared)
};

/// Everything an AppEvaluator needs.
struct AppRun {
  cl_command_queue app_queue = nullptr;     ///< the app's queue (finished before the snapshot)
  cl_kernel kernel = nullptr;               ///< the app's kernel, arguments set
  Extent global;                            ///< the app's NDRange
  Remainder remainder = Remainder::divide;  ///< how local sizes relate to it
  const DeviceInfo* device = nullptr;       ///< the queue's device model
  const KernelFacts* facts = nullptr;       ///< the kernel's facts
  std::vector<WrittenArg> written;          ///< the buffers it may write
  LocalArgsSetter local_args;               ///< sizes __local arguments (may be empty)
  double tolerance = 0;                     ///< see KernelOptions::tolerance
};

/// True when `a` and `b` (`bytes` each) hold the same values: byte for byte,
/// or for element 'f' / 'd' within relative `tolerance` (> 0).
bool outputs_match(const unsigned char* a, const unsigned char* b, std::size_t bytes, char element,
                   double tolerance) noexcept;

/// An Evaluator over an app's kernel (see the file comment). The
/// constructor snapshots the written buffers and runs the reference; the
/// destructor restores the buffers (restore() does it early).
class AppEvaluator final : public Evaluator {
 public:
  /// Throws ClError when the profiling queue or a snapshot cannot be made,
  /// UsageError when no configuration runs for the reference.
  explicit AppEvaluator(AppRun run);
  ~AppEvaluator() override;
  AppEvaluator(const AppEvaluator&) = delete;
  AppEvaluator& operator=(const AppEvaluator&) = delete;

  const TuneTarget& target() const override { return target_; }
  /// The local sizes of the NDRange (not only divisors for padded or
  /// non-uniform kernels) with the paper's rule; baseline NULL.
  const SearchSpace& space() const override { return space_; }
  /// The first evaluation of a configuration starts from the snapshot, runs
  /// once and compares the written buffers with the reference
  /// (TrialStatus::correctness on a mismatch); then warm-up and timed runs.
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override;
  /// Runs `configs` once each per round, interleaved (the order rotates each
  /// round), for `rounds` rounds or until `limit` passes (at least
  /// `min_rounds`). Returns the samples per configuration; a configuration
  /// that fails gets no samples.
  std::vector<Samples> interleave(const std::vector<LocalSize>& configs, unsigned rounds, unsigned min_rounds,
                                  std::chrono::milliseconds limit);
  /// The NDRange a configuration runs (padded for Remainder::pad).
  [[nodiscard]] Extent run_global(const LocalSize& local) const;
  /// Writes the snapshots back into the app's buffers and waits.
  void restore();

 private:
  std::string refuse(const LocalSize& local);
  cl_int run_once(const LocalSize& local, cl_event* event);
  std::string verify(const LocalSize& local, TrialStatus& status);
  std::vector<std::vector<unsigned char>> read_written();

  AppRun run_;
  cl::CommandQueue queue_;
  TuneTarget target_;
  SearchSpace space_;
  std::vector<cl::Buffer> snapshots_;
  std::vector<std::size_t> bytes_;
  std::vector<std::vector<unsigned char>> reference_;
  std::set<std::string> verified_;
  bool restored_ = false;
};

}  // namespace wstune::detail
