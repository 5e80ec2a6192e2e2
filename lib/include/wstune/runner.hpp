#pragma once
/// @file runner.hpp
/// Runs one kernel (or one block of it) on one device with a given local
/// work size: builds the program once, keeps inputs resident, times the
/// kernel with profiling events and host↔device transfers separately, and
/// classifies failures as data (TrialStatus) instead of throwing.

#include <memory>
#include <string>
#include <vector>

#include "wstune/device.hpp"
#include "wstune/kernel.hpp"
#include "wstune/timing.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// The result of running one configuration.
struct RunResult {
  TrialStatus status = TrialStatus::correct;  ///< correct unless something failed
  std::string error;        ///< why it failed (error name, call, log excerpt)
  LocalSize local;          ///< the local size asked for
  Samples kernel;           ///< kernel time per repetition (ms, profiling events)
  Samples h2d;              ///< host→device transfer of the block's inputs (ms)
  Samples d2h;              ///< device→host transfer of the block's output (ms)
  /// Wall clock of the upload() this run used, host staging of pageable
  /// memory included (the events above time only the device's copy), ms.
  double h2d_wall_ms = 0;
  /// Wall clock of the blocking read-back, host staging included, ms.
  double d2h_wall_ms = 0;
  double wall_ms = 0;       ///< wall clock of the whole call (ms)
  HostBuffer output;        ///< the block's output (block_output_size floats)
  /// True when status is TrialStatus::correct.
  [[nodiscard]] bool ok() const noexcept { return status == TrialStatus::correct; }
};

/// One device, one kernel: context, profiling queue and built program.
/// Not thread-safe; use one per thread.
class DeviceRunner {
 public:
  /// Builds the kernel's program for the device. Throws BuildError (with the
  /// log) when it does not compile, ClError for other failures.
  DeviceRunner(Device device, const KernelSpec& spec, std::string build_options = {});
  ~DeviceRunner();
  DeviceRunner(const DeviceRunner&) = delete;
  DeviceRunner& operator=(const DeviceRunner&) = delete;

  /// The device.
  [[nodiscard]] const Device& device() const noexcept;
  /// The kernel descriptor.
  [[nodiscard]] const KernelSpec& spec() const noexcept;
  /// CL_KERNEL_WORK_GROUP_SIZE of the built kernel (work-items).
  [[nodiscard]] std::size_t kernel_work_group_size() const noexcept;
  /// min(device max work-group size, CL_KERNEL_WORK_GROUP_SIZE).
  [[nodiscard]] std::size_t max_local_items() const noexcept;
  /// CL_KERNEL_LOCAL_MEM_SIZE of the built kernel (bytes).
  [[nodiscard]] std::uint64_t kernel_local_mem_bytes() const noexcept;

  /// Why `local` cannot run `b` on this device ("" when it can): a dimension
  /// that does not divide the block's NDRange (OpenCL 1.2 §5.8,
  /// CL_INVALID_WORK_GROUP_SIZE), above the max work-item sizes, or a product
  /// above max_local_items().
  [[nodiscard]] std::string check_local(const Problem& p, const Block& b, const LocalSize& local) const;

  /// Uploads the block's inputs (KernelSpec::block_inputs) and allocates the
  /// output; they stay resident for run(). Throws ClError.
  void upload(const Problem& p, const Block& b, const std::vector<HostBuffer>& block_inputs);

  /// Runs warm-up + repetitions of the uploaded block with `local`, reads the
  /// output once. Never throws for a failing configuration: the status says
  /// constraints (check_local refused it), runtime (an OpenCL error). The
  /// caller verifies the output (status stays correct until then).
  RunResult run(const Problem& p, const Block& b, const LocalSize& local, const TimingOptions& timing);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Convenience: generate inputs with `seed`, run the whole problem on one
/// device, verify against the CPU reference (status correctness on failure).
/// The Verdict is stored in `verdict` when not null.
RunResult run_and_verify(DeviceRunner& runner, const Problem& p, const LocalSize& local,
                         const TimingOptions& timing, std::uint64_t seed = 42,
                         Verdict* verdict = nullptr);

}  // namespace wstune
