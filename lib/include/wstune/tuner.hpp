#pragma once
/// @file tuner.hpp
/// The run-time API for OpenCL applications: ask the store for the local
/// work size of a kernel over a global size on a queue's device, and enqueue
/// with it. Accepts plain cl_kernel / cl_command_queue handles and the C++
/// bindings' cl::Kernel / cl::CommandQueue.
///
/// @code
/// wstune::Tuner tuner;                                   // default database
/// auto local = tuner.local_size(queue, kernel, {1024, 1024, 2});
/// tuner.launch(queue, kernel, cl::NDRange(1024, 1024)); // enqueues with it
/// @endcode
///
/// The kernel is identified by CL_KERNEL_FUNCTION_NAME, the device by
/// DeviceInfo::fingerprint() (query_device_info). Answers come from the
/// look-up chain (lookup.hpp) and are cached per process.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <CL/opencl.hpp>

#include "wstune/lookup.hpp"
#include "wstune/store.hpp"
#include "wstune/timing.hpp"
#include "wstune/trial.hpp"

namespace wstune {

/// How a Tuner behaves.
struct TunerOptions {
  LookupOptions lookup;        ///< the look-up chain's options
  StoreOptions store;          ///< how to open the database (path constructor only)
  /// When nothing is stored for this device and kernel (the chain falls to
  /// the architecture level or below), launch() first tunes online: it runs
  /// the kernel with its current arguments over NULL, the paper's rule and
  /// divisor shapes, timed with profiling events, within the budget below,
  /// and stores every trial and the best. Only for kernels that may run
  /// repeatedly with the same arguments (not in-place ones).
  bool tune_online = false;
  unsigned online_max_trials = 12;     ///< at most this many configurations
  std::chrono::milliseconds online_max_time{2000};  ///< and at most this long
  TimingOptions online_timing{1, 3};   ///< warm-up and repetitions per configuration
};

/// A tuner Trial (trial.hpp) as a store row: local size, status, error,
/// every kernel sample (ms) and the run's wall time as run_ms.
TrialRecord to_record(const Trial& t);
/// A stored row as a Trial (from_store = true), for TuneOptions::lookup.
Trial from_record(const TrialRecord& r);

/// An NDRange (cl::NDRange) as an Extent; throws UsageError for 0-D or 3-D ranges.
Extent extent_of(const cl::NDRange& range);

/// Looks up and applies stored local work sizes. Not thread-safe: one per thread.
class Tuner {
 public:
  /// Opens the database at `db_path` (default_db_path() when empty; created
  /// if missing). Throws StoreError.
  explicit Tuner(const std::string& db_path = {}, TunerOptions options = {});
  /// Uses an open store (not owned; must outlive the Tuner).
  explicit Tuner(Store& store, TunerOptions options = {});
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  /// The look-up chain's answer for `kernel` over `global` on `queue`'s
  /// device. Throws ClError when a handle is invalid, StoreError on a
  /// database failure.
  LookupResult lookup(cl_command_queue queue, cl_kernel kernel, const Extent& global);
  /// lookup().local.
  LocalSize local_size(cl_command_queue queue, cl_kernel kernel, const Extent& global);
  /// lookup().local for the C++ bindings.
  LocalSize local_size(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global);

  /// Enqueues `kernel` over `global` with the looked-up local size (tuning
  /// online first when TunerOptions::tune_online says so). Stores the
  /// kernel's event in `event` when not null. Returns the answer used.
  /// Throws ClError when the enqueue fails.
  LookupResult launch(cl_command_queue queue, cl_kernel kernel, const Extent& global, cl_event* event = nullptr);
  /// launch() for the C++ bindings.
  LookupResult launch(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global,
                      cl::Event* event = nullptr);

  /// Tunes online now (see TunerOptions::tune_online), stores the session,
  /// its trials and the best configuration, and returns the new answer.
  /// Resumes an unfinished online session of the same key without measuring
  /// a configuration twice. Throws ClError / StoreError.
  LookupResult tune(cl_command_queue queue, cl_kernel kernel, const Extent& global);

  /// The device model of `queue`'s device (queried once per device).
  const DeviceInfo& device_info(cl_command_queue queue);
  /// The store.
  [[nodiscard]] Store& store() const noexcept;
  /// The look-up chain (e.g. to clear its cache).
  [[nodiscard]] Lookup& lookup_chain() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
