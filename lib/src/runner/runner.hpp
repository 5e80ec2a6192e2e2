#pragma once
/// @file runner.hpp
/// Runs one kernel (or one block of it) on one device with a given
/// configuration: builds each configuration's program once (a build per
/// distinct set of build options, cached), keeps inputs resident, times the
/// kernel with profiling events and host↔device transfers separately, and
/// classifies failures as data (TrialStatus) instead of throwing.
/// Sources: OpenCL 1.2 §5.6 (program objects), §5.7.3 (kernel work-group
/// info), §5.8 (clEnqueueNDRangeKernel), §5.12 (profiling).

#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"
#include "wstune/device.hpp"
#include "wstune/timing.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// One span of a run (RunResult::spans): an upload, a kernel run or a
/// read-back, from its profiling events (CL_PROFILING_COMMAND_START of the
/// first, _END of the last, OpenCL 1.2 §5.12) placed on the host's
/// monotonic clock (std::chrono::steady_clock, ms since its epoch) by
/// EventClock (spans.hpp): the device's clock anchored at the
/// CL_PROFILING_COMMAND_QUEUED time of the call's first command.
struct RunSpan {
  std::string what;  ///< "upload", "kernel" or "download"
  int chunk = -1;    ///< the chunk of an overlapped run (-1: the whole block, or an input every chunk shares)
  double start_ms = 0;
  double end_ms = 0;
};

/// The result of running one configuration.
struct RunResult {
  TrialStatus status = TrialStatus::correct;  ///< correct unless something failed
  std::string error;                          ///< why it failed (error name, call, build log excerpt)
  LocalSize local;                            ///< the local size asked for
  Extent global;                              ///< the NDRange launched (rounded up for a bounds-guarded kernel)
  Samples kernel;                             ///< kernel time per repetition (ms, profiling events)
  /// The last warm-up run was steady and is kernel.ms[0] (TimingOptions::steady_warmup).
  bool warmup_counted = false;
  Samples h2d;  ///< host→device transfer of the block's inputs (ms)
  Samples d2h;  ///< device→host transfer of the block's outputs (ms)
  /// Wall clock of the upload() this run used, host staging of pageable
  /// memory included (the events above time only the device's copy), ms.
  double h2d_wall_ms = 0;
  /// Wall clock of the blocking read-back, host staging included, ms.
  double d2h_wall_ms = 0;
  std::size_t h2d_bytes = 0;  ///< bytes the upload() this run used wrote to the device
  std::size_t d2h_bytes = 0;  ///< bytes read back from the device (0 when nothing was read)
  double compile_ms = 0;      ///< build of this configuration's program in this call (0 when cached)
  double wall_ms = 0;         ///< wall clock of the whole call (ms)
  /// The block's outputs (KernelSpec::outputs(), read_count elements each).
  std::vector<HostBuffer> outputs;
  /// When its uploads (upload()'s, for run()), kernel runs and read-backs
  /// ran, in the order enqueued (a per-worker timeline, wstuned --timeline).
  std::vector<RunSpan> spans;
  /// True when status is TrialStatus::correct.
  [[nodiscard]] bool ok() const noexcept { return status == TrialStatus::correct; }
};

/// What OpenCL says about one built kernel (one configuration's program).
struct KernelVariantInfo {
  std::string build_options;          ///< the options it was built with
  std::size_t work_group_size = 0;    ///< CL_KERNEL_WORK_GROUP_SIZE (work-items)
  std::uint64_t local_mem_bytes = 0;  ///< CL_KERNEL_LOCAL_MEM_SIZE (bytes)
  /// CL_KERNEL_COMPILE_WORK_GROUP_SIZE: the reqd_work_group_size attribute,
  /// nullopt when the kernel has none (OpenCL 1.2 §6.7.2).
  LocalSize required_local;
  double compile_ms = 0;  ///< wall time of the build (ms): clBuildProgram, or loading the cached binary
  /// Built from the program binary cache (program_cache/program_cache.hpp):
  /// a binary loaded, or a known compile failure, instead of a compile.
  bool from_cache = false;
};

/// Where run() reads one output to instead of a fresh RunResult::outputs
/// buffer (e.g. the block's place in the whole output,
/// KernelSpec::output_place()): `bytes` at `data` back to back, or with
/// row_bytes > 0 rows of row_bytes whose starts are pitch_bytes apart
/// (clEnqueueReadBufferRect, OpenCL 1.2 §5.2.2).
struct ReadTarget {
  std::byte* data = nullptr;    ///< nullptr: read into RunResult::outputs as usual
  std::size_t bytes = 0;        ///< must equal the output's read_count × element bytes
  std::size_t row_bytes = 0;    ///< bytes per row (0: one contiguous run); must divide `bytes`
  std::size_t pitch_bytes = 0;  ///< bytes between row starts at `data` (≥ row_bytes)
};

/// One sub-block of an overlapped run (DeviceRunner::run_overlapped()).
/// Move chunks into their vector: a copy copies `inputs` to the heap
/// (HostBuffer's copy of a view), and copied chunks share no input.
struct OverlapChunk {
  Block block;  ///< the sub-block (split units), a part of the device's block
  /// Its input data, KernelSpec::block_inputs() of `block`: host memory that
  /// stays put until the call returns (pinned memory makes the copies DMA).
  /// An input whose data (same address, size and placement) every chunk
  /// shares, such as matmul's B, is uploaded once.
  std::vector<HostBuffer> inputs;
  /// Where each output's read-back lands (one per KernelSpec::outputs() of
  /// `block`, each with its data set): its place in the whole output.
  std::vector<ReadTarget> targets;
};

/// Why a build needing `kernel_local_mem_bytes` of local memory
/// (CL_KERNEL_LOCAL_MEM_SIZE, OpenCL 1.2 §5.7.3) cannot launch on `device`
/// ("" when it can): more than CL_DEVICE_LOCAL_MEM_SIZE. With `kernel_limit`
/// false on a GPU the launch decides instead (a refusal there,
/// CL_OUT_OF_RESOURCES, is the trial's constraints): NVIDIA's driver answers
/// 48 KiB on the H100 while kernels built with more may run (issue 36),
/// whereas PoCL's CPU devices abort the process on such a launch, so other
/// devices are always checked before it.
[[nodiscard]] std::string local_memory_refusal(const DeviceInfo& device, std::uint64_t kernel_local_mem_bytes,
                                               bool kernel_limit);

/// One device, one kernel: context, profiling queue and built programs.
/// Not thread-safe; use one per thread.
class DeviceRunner {
 public:
  /// Creates the context and queue. A kernel without tuning parameters is
  /// built at once (throws BuildError with the log when it does not compile);
  /// a kernel with parameters is built per configuration on first use.
  /// `extra_build_options` are added to every build. Throws ClError for
  /// other failures.
  DeviceRunner(Device device, const KernelSpec& spec, std::string extra_build_options = {});
  ~DeviceRunner();
  DeviceRunner(const DeviceRunner&) = delete;
  DeviceRunner& operator=(const DeviceRunner&) = delete;

  /// The device.
  [[nodiscard]] const Device& device() const noexcept;
  /// The kernel descriptor.
  [[nodiscard]] const KernelSpec& spec() const noexcept;
  /// The device's context (e.g. for PinnedMemory of this device).
  [[nodiscard]] const cl::Context& context() const noexcept;
  /// CL_KERNEL_WORK_GROUP_SIZE of the kernel built for the reference
  /// parameters (0 before it is built).
  [[nodiscard]] std::size_t kernel_work_group_size() const noexcept;
  /// min(device max work-group size, kernel_work_group_size()).
  [[nodiscard]] std::size_t max_local_items() const noexcept;
  /// CL_KERNEL_LOCAL_MEM_SIZE of the kernel built for the reference parameters (bytes).
  [[nodiscard]] std::uint64_t kernel_local_mem_bytes() const noexcept;
  /// clBuildProgram wall time (ms) of every program this runner has built
  /// so far, failed builds included: the difference across a call is what
  /// that call spent building (RunResult::compile_ms instead reports a
  /// build on its first use, which may be a later call than the build's).
  [[nodiscard]] double compiled_ms() const noexcept;

  /// Builds (once; later calls return the cached result) the program of
  /// p.params and returns what OpenCL says about its kernel, or nullptr with
  /// `error` set to the build log (a configuration that does not compile is
  /// data, not an exception). Throws ClError for other OpenCL failures.
  const KernelVariantInfo* variant(const Problem& p, std::string* error);

  /// Builds the programs of every problem's parameters that are not built
  /// yet, on `threads` threads at once (0: the hardware's threads), so a
  /// search over many parameter sets does not wait for one build at a time.
  /// Failed builds are kept as data for run() (status compile). Throws
  /// ClError only for failures outside the builds.
  void prebuild(const std::vector<Problem>& problems, unsigned threads = 0);

  /// Builds the program of p.params into the program binary cache
  /// (ProgramCache::process()) without keeping it here: what the build
  /// pool's builders do (evaluate/build_pool.hpp). True when it built (from
  /// source or the cache); false with the failure (a compile error, or an
  /// OpenCL failure outside the build) in `error` when given. Never throws.
  bool precompile(const Problem& p, std::string* error = nullptr) noexcept;

  /// Drops the built programs of all but the `keep` most recently built
  /// parameter sets (the reference's program stays), so a campaign over
  /// tens of thousands of configurations holds a bounded number of programs
  /// (host and device memory); one needed again is built again, through the
  /// program binary cache. Call it between runs, never while a
  /// KernelVariantInfo of variant() is in use.
  void forget_programs(std::size_t keep) noexcept;

  /// With `on`, each program later built from source is also loaded back
  /// from its binary and built once (build_program()'s `warm`), so the
  /// driver's own cache of the binary's build (NVIDIA's PTX JIT) is warm for
  /// the process that loads it next: the build pool's builders set it.
  void warm_builds(bool on) noexcept;

  /// Hands a RunResult's outputs back once they are no longer needed: the
  /// next run() reads back into them instead of allocating fresh host
  /// memory (whose first touch costs page faults for large outputs); not
  /// by a run() given its own output memory.
  void recycle(std::vector<HostBuffer>&& outputs);

  /// Makes later run()s read output k straight into targets[k] (where its
  /// data is set; the output's RunResult::outputs buffer is then empty) until
  /// called again; an empty vector restores the usual read-back. run() fails
  /// with status runtime when a target's size is not the read-back's.
  void read_into(std::vector<ReadTarget> targets);

  /// Why `local` cannot run `b` with p.params on this device ("" when it
  /// can): a dimension that does not divide the block's NDRange (OpenCL 1.2
  /// §5.8, CL_INVALID_WORK_GROUP_SIZE) unless the kernel guards its bounds or
  /// the device runs non-uniform work-groups, above the max work-item sizes, a
  /// product above min(device max work-group size, CL_KERNEL_WORK_GROUP_SIZE
  /// of the configuration's own build; the device's alone when
  /// `kernel_limit` is false), local memory beyond the device's
  /// (local_memory_refusal()), or not the
  /// kernel's reqd_work_group_size. Builds the configuration's program when
  /// needed; a build failure gives its log.
  [[nodiscard]] std::string check_local(const Problem& p, const Block& b, const LocalSize& local,
                                        bool kernel_limit = true);

  /// The NDRange launched for `b` with `local`: the block's NDRange, rounded
  /// up to a multiple of `local` when the kernel guards its bounds and the
  /// device does not run non-uniform work-groups.
  [[nodiscard]] Extent launch_global(const Problem& p, const Block& b, const LocalSize& local) const;

  /// Uploads the block's inputs (KernelSpec::block_inputs) and allocates its
  /// outputs (KernelSpec::outputs); they stay resident for run(). The inputs
  /// are copied straight from `block_inputs` (pinned memory there makes the
  /// copy a DMA); only an in-place output's input is kept on the host (to
  /// restore it). With a `resident_id` (names the inputs' contents, e.g.
  /// kernel, size, parameters and seed) equal to the last upload()'s, of the
  /// same block and parameters, and a kernel without in-place outputs,
  /// nothing is written: the device buffers still hold these inputs
  /// (inputs kept on the device across repeated jobs; RunResult::h2d of the
  /// next run() is then empty). Throws ClError.
  void upload(const Problem& p, const Block& b, const std::vector<HostBuffer>& block_inputs,
              const std::string& resident_id = {});

  /// Runs warm-up + repetitions of the uploaded block with p.params and
  /// `local`, reads the outputs once (unless `read_outputs` is false: then
  /// RunResult::outputs are empty buffers, e.g. for a configuration already
  /// verified). Never throws for a failing configuration: the status says
  /// compile (the build log), constraints (check_local refused it, or the
  /// launch of a group larger than the build's CL_KERNEL_WORK_GROUP_SIZE was
  /// refused) or runtime (an OpenCL error). A group above the build's
  /// CL_KERNEL_WORK_GROUP_SIZE but within the device's maximum is launched
  /// and the driver decides: NVIDIA's reports 256 for kernels it runs with
  /// 1,024 work-items (issue 36; docs/tuning-files.md). The caller verifies the outputs (status stays correct
  /// until then). RunResult::compile_ms is the build's time the first time a
  /// build is used (prebuilt or not), else 0. Outputs not redirected by
  /// read_into() are read into new, unzeroed memory from `output_memory`
  /// (e.g. shared memory another process maps, daemon/transport/shared_memory.hpp;
  /// it must outlive them), or with none into recycled or heap buffers.
  /// With the environment variable WSTUNE_TIMING_LOCK naming a file, the
  /// warm-ups and samples hold an exclusive flock(2) on it, so processes
  /// sharing a device time one at a time (docs/tuning.md); a lock that
  /// cannot be taken is status runtime.
  RunResult run(const Problem& p, const Block& b, const LocalSize& local, const TimingOptions& timing,
                bool read_outputs = true, std::pmr::memory_resource* output_memory = nullptr);

  /// Runs a block once as consecutive sub-blocks (`chunks`) over two
  /// in-order command queues, chunk s on queue s mod 2: its upload, its
  /// kernel and its read-back straight to its targets are enqueued
  /// non-blocking, so one chunk's transfers overlap the other queue's
  /// kernel and transfers in the other direction (OpenCL 1.2 §5.1: commands
  /// of different queues may run concurrently; §5.2.2 non-blocking
  /// transfers). Shared inputs are uploaded once first, on the first queue,
  /// and the second queue waits for them (a barrier); an in-place output
  /// (OutputBuffer::from_input) starts as its chunk's input, written into
  /// the output's buffer. Each chunk's outputs are its own, as if it were a
  /// block of its own (KernelSpec::finish must then be given the chunks'
  /// blocks). Device buffers are each queue's own, kept between calls;
  /// upload()'s buffers are left as they are. RunResult: one sample each of
  /// kernel (the chunks' kernel times added; kernels of the two queues that
  /// run at once each span more), h2d (every upload's event time added) and
  /// d2h (every read-back's), their bytes, wall_ms, global = the last
  /// chunk's NDRange; outputs empty (they are in the targets). With `runs`
  /// > 1 each chunk's kernel runs that many times between its upload and its
  /// read-back (an in-place output with restore_each_run is written again
  /// before each run, counted in h2d), and kernel has one sample per run
  /// (that run's kernel times of every chunk added); 0 counts as 1. Never throws for a failing
  /// configuration: status compile, constraints (a chunk the local size
  /// cannot run) or runtime (an OpenCL error, no chunks, or a chunk without
  /// a target of the read-back's size for every output).
  /// With a `resident_id` (as upload()'s) each chunk's inputs go to device
  /// buffers of their own, kept between calls, and when the id and the
  /// chunks' blocks equal the last such call's and the kernel has no in-place
  /// output, no input is written again (inputs kept on the device across
  /// repeated jobs; a call without an id forgets them).
  RunResult run_overlapped(const Problem& p, const std::vector<OverlapChunk>& chunks, const LocalSize& local,
                           unsigned runs = 1, const std::string& resident_id = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Which configuration's outputs reference_outputs() took.
struct ReferenceChoice {
  /// The parameters whose outputs are the reference: the kernel's reference
  /// configuration (KernelSpec::reference_params()), or the first valid
  /// configuration after it that built and ran; {} for a CPU reference.
  nlohmann::json params = nlohmann::json::object();
  /// The parameter sets tried before `params`, each of which failed to build
  /// or run on the device (in the order tried), and why.
  std::vector<std::pair<nlohmann::json, std::string>> rejected;
};

/// At most this many configurations are tried as the reference (the kernel's
/// reference configuration and the valid ones after it).
inline constexpr std::size_t kReferenceAttempts = 32;

/// The whole problem's expected outputs: the kernel's CPU reference, or, for
/// a kernel without one, the outputs of its reference configuration
/// (KernelSpec::reference_params()) run on `runner`'s device. When that
/// configuration does not build or run there, the next valid configurations
/// in the parameters' order (the last parameter fastest, wrapping round; those
/// the kernel's constraints allow) are tried in turn and the first that runs
/// is the reference: `choice` (when not null) says which, and which failed.
/// Throws Error when none of kReferenceAttempts runs.
std::vector<HostBuffer> reference_outputs(DeviceRunner& runner, const Problem& p, const std::vector<HostBuffer>& inputs,
                                          ReferenceChoice* choice = nullptr);

/// Places block `b`'s outputs into whole outputs, finishes them
/// (KernelSpec::finish) and verifies them against `ref`.
Verdict verify_outputs(const KernelSpec& k, const Problem& p, const Block& b, const std::vector<HostBuffer>& outputs,
                       const std::vector<HostBuffer>& ref);

/// "verification failed: <detail> = <error> > <tolerance>".
std::string verification_error(const Verdict& v);

/// Convenience: generate inputs with `seed`, run the whole problem on one
/// device, verify against reference_outputs() (status correctness on failure).
/// The Verdict is stored in `verdict` when not null.
RunResult run_and_verify(DeviceRunner& runner, const Problem& p, const LocalSize& local, const TimingOptions& timing,
                         std::uint64_t seed = 42, Verdict* verdict = nullptr);

}  // namespace wstune
