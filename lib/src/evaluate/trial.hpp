#pragma once
/// @file trial.hpp
/// Measuring one configuration (tuning parameter values and a local work
/// size) of one kernel on one device: the Trial record, the Evaluator
/// interface, the search space of a kernel's configurations, and two evaluators —
/// in-process, and isolated in a forked worker process with a per-trial
/// timeout (a kernel that hangs or crashes the driver cannot take the tuner
/// down). Failures are data (TrialStatus), after Kernel Tuner's T4 format.
/// Sources: target.cpp, space_of.cpp, in_process.cpp (with trial_runner.hpp),
/// isolated.cpp (with child_process.hpp); the JSON form is
/// format/trial_json.hpp. See docs/tuning.md for the isolation mechanism.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"
#include "observe/observer.hpp"
#include "runner/runner.hpp"
#include "space/search_space.hpp"
#include "wstune/configuration.hpp"
#include "wstune/device.hpp"
#include "wstune/energy.hpp"
#include "wstune/timing.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// One measured configuration.
struct Trial {
  /// Tuning parameter values (name → JSON number, bool or string); {} without parameters.
  nlohmann::json params = nlohmann::json::object();
  LocalSize local;  ///< the local size (nullopt = driver's choice, NULL)
  /// The NDRange launched when it is not the target's (the parameters set
  /// the work per work-item, or it was rounded up to the local size).
  std::optional<Extent> global;
  TrialStatus status = TrialStatus::correct;  ///< outcome
  std::string error;                          ///< why it failed ("" when correct)
  Samples kernel;                             ///< kernel time per repetition (ms, profiling events)
  double wall_ms = 0;                         ///< tuner-side wall time of the trial, request to answer (ms)
  double run_wall_ms = 0;                     ///< wall time of the run itself (warm-up, repetitions, read-back) (ms)
  double compile_ms = 0;                      ///< program build in this trial (0 when it was built before)
  double verify_ms = 0;                       ///< verification of the outputs in this trial (ms)
  bool verified = false;                      ///< the output was checked against the CPU reference in this trial
  bool from_store = false;                    ///< taken from an "already measured" lookup, not measured now
  /// Energy and power on the device's own sensor (observe/observer.hpp),
  /// measured after the timed runs of a correct trial; none without a sensor.
  std::optional<EnergyMeasurement> energy = std::nullopt;
  /// {params, local}.
  [[nodiscard]] Configuration configuration() const { return Configuration{params, local}; }
  /// True when status is TrialStatus::correct.
  [[nodiscard]] bool ok() const noexcept { return status == TrialStatus::correct; }
  /// Median kernel time (ms); 0 when there are no samples.
  [[nodiscard]] double median_ms() const { return kernel.median(); }
};

/// What an evaluator measures: the problem's NDRange, the device's limits and
/// model, and the kernel's priority.
struct TuneTarget {
  std::string kernel;  ///< kernel name
  std::string size;    ///< canonical problem size text
  /// The NDRange (global work size, work-items) of the baseline
  /// configuration; other parameter values may set another.
  Extent global;
  /// The problem's extent for the store (ProblemKey::global): the NDRange for
  /// kernels without parameters, the problem size (T1 ProblemSize) for described ones.
  Extent problem;
  Priority priority = Priority::none;  ///< the kernel's priority (paper §3.2.3)
  SpaceLimits limits;                  ///< device and kernel limits of the local size
  unsigned pe_per_cu = 0;              ///< processing elements per compute unit (paper §2.1)
  std::string device_name;             ///< CL_DEVICE_NAME
  std::string device_id;               ///< "P:D" selector
  std::string device_fingerprint;      ///< DeviceInfo::fingerprint()
  DeviceInfo device;                   ///< the whole device model (for the store)
  /// The parameters of the configuration whose outputs are the reference and
  /// which is the baseline, when they are not the kernel's own reference
  /// configuration (KernelSpec::reference_params()) because that did not
  /// build or run on the device (reference_outputs()); {} otherwise.
  nlohmann::json reference_params = nlohmann::json::object();
  /// The parameter sets tried as the reference before it, each of which
  /// failed to build or run: tune() measures them first, so their
  /// invalidity is recorded as trials.
  std::vector<nlohmann::json> rejected_references;
  /// The energy sensor its trials are observed with ("nvml", "rapl"), or ""
  /// when none: then energy_note says why ("energy: not measured").
  std::string energy_sensor = {};
  std::string energy_note = {};  ///< why no sensor observes the device ("" with one)
};

/// Records in `target` which configuration reference_outputs() took (its
/// `choice`) when it is not `spec`'s reference configuration: the
/// reference parameters and the rejected ones, and the target's NDRange and
/// problem extent with the new reference's parameters (problem `p`, block `b`).
void apply_reference(TuneTarget& target, const KernelSpec& spec, const Problem& p, const Block& b,
                     const ReferenceChoice& choice);

/// A target on `device` with its limits and model filled in, and the built
/// kernel's CL_KERNEL_WORK_GROUP_SIZE (`kernel_work_group_size`, work-items)
/// and CL_KERNEL_LOCAL_MEM_SIZE (`kernel_local_mem_bytes`); kernel, size,
/// global and priority are left for the caller.
TuneTarget device_tune_target(const DeviceInfo& device, std::size_t kernel_work_group_size,
                              std::uint64_t kernel_local_mem_bytes);

/// The target of tuning block `b` of problem `p` on `runner`'s device and
/// built kernel (the whole problem when `b` is the whole block): the block's
/// NDRange (with the reference parameters), the device's and the kernel's
/// limits (a kernel with tuning parameters: the device's only, as each
/// configuration's own build is checked when it runs), and the device model.
TuneTarget make_tune_target(DeviceRunner& runner, const Problem& p, const Block& b);

/// As make_tune_target(DeviceRunner&, ...) from what a remote process
/// reports: the device model `device` and the built kernel's
/// CL_KERNEL_WORK_GROUP_SIZE (work-items) and CL_KERNEL_LOCAL_MEM_SIZE
/// (bytes). wstuned's master builds a worker's search space with it.
TuneTarget make_tune_target(const KernelSpec& spec, const DeviceInfo& device, std::size_t kernel_work_group_size,
                            std::uint64_t kernel_local_mem_bytes, const Problem& p, const Block& b);

/// The configurations of `spec` for problem `p` (block `b`) on `target`'s
/// device: without tuning parameters, the local sizes of the NDRange
/// (enumerate_local_sizes, with the paper's rule); with parameters, every
/// combination the constraints allow (KernelSpec::satisfies_constraints),
/// with the local size the parameters set when it can run (divides the
/// NDRange unless target.limits.any_shape, within the device limits), else
/// NULL and every settable shape. The baseline is the reference parameters
/// with NULL (or their local size). Throws UsageError for a space over the
/// size cap or with no configuration at all, naming the fix.
SearchSpace make_search_space(const KernelSpec& spec, const Problem& p, const Block& b, const TuneTarget& target);

/// Measures configurations. Implementations never throw for a failing
/// configuration: they return a Trial whose status says why.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// The target being measured.
  [[nodiscard]] virtual const TuneTarget& target() const = 0;
  /// The configurations to search (the baseline first, see SearchSpace).
  [[nodiscard]] virtual const SearchSpace& space() const = 0;
  /// Runs `timing.warmup` untimed and `timing.repetitions` timed launches of
  /// `config`; the first time a configuration runs its outputs are verified
  /// against the reference (status correctness on mismatch).
  virtual Trial evaluate(const Configuration& config, const TimingOptions& timing) = 0;
  /// A hint that these configurations come next: their programs may be built
  /// now, several at once (DeviceRunner::prebuild). The default does nothing.
  virtual void prepare(const std::vector<Configuration>& /*upcoming*/) {}
  /// How many of a searcher's next proposals tune() announces to prepare()
  /// ahead of the trials (it tops them up when fewer than half are left).
  [[nodiscard]] virtual std::size_t announce_ahead() const noexcept { return 64; }
};

/// Where and how to run a kernel for tuning.
struct EvaluatorConfig {
  std::string device = "default";  ///< device selector (see select_devices())
  std::uint64_t seed = 42;         ///< input seed
  std::string build_options;       ///< extra OpenCL compiler options
  /// Per-trial limit (isolated evaluator only): the worker is killed and the
  /// trial is a timeout when no answer comes within it.
  std::chrono::milliseconds trial_timeout{60'000};
  /// Limit for the worker's start (device query, build, inputs, reference).
  std::chrono::milliseconds startup_timeout{600'000};
  /// Energy observation of each correct trial (observe/observer.hpp).
  EnergyOptions energy = {};
  /// Builder processes that compile the configurations announced by
  /// prepare() ahead of the trials (isolated evaluator only; BuildPool,
  /// build_pool.hpp): -1 = default_build_jobs() of the device's type, 0 =
  /// none (the worker builds, several at once, as prepare() asks). Without
  /// the program binary cache (ProgramCache::process() off) there is no pool.
  int build_jobs = -1;
};

/// Runs trials in this process (no isolation: a hanging kernel hangs the
/// caller). Builds the program, uploads the inputs and computes the CPU
/// reference once in the constructor. Throws UsageError for a bad device
/// selector, BuildError when the kernel does not compile, ClError otherwise.
class InProcessEvaluator final : public Evaluator {
 public:
  /// @param spec the kernel (must outlive the evaluator)
  InProcessEvaluator(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& config);
  ~InProcessEvaluator() override;
  const TuneTarget& target() const override;
  const SearchSpace& space() const override;
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override;
  void prepare(const std::vector<Configuration>& upcoming) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs trials in one long-lived forked worker process that owns its own
/// OpenCL context, talking over a Unix socket pair (length-prefixed JSON).
/// A trial with no answer within EvaluatorConfig::trial_timeout is a
/// TrialStatus::timeout: the worker gets SIGKILL and a fresh one starts on
/// the next trial. A worker that dies (a driver crash) makes the trial a
/// TrialStatus::runtime with the signal, and is restarted likewise.
/// With a build pool (EvaluatorConfig::build_jobs) the programs of the
/// configurations prepare() announces are built ahead in builder processes
/// into the program binary cache, and each trial first waits for its
/// configuration's builder (build_pool.hpp); its wall_ms includes that wait.
///
/// The calling process must not have initialised OpenCL before the first
/// fork (OpenCL runtimes keep threads and state that fork does not copy):
/// the worker queries the device and reports TuneTarget back.
/// The constructor starts the worker; it throws UsageError when the worker
/// reports a bad selector or size, Error when the worker fails to start. A
/// kernel that does not compile is not thrown: every trial is then
/// TrialStatus::compile with the build log.
class IsolatedEvaluator final : public Evaluator {
 public:
  /// @param spec the kernel (must outlive the evaluator; it is used by the
  ///             forked worker through the copied address space)
  IsolatedEvaluator(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& config);
  ~IsolatedEvaluator() override;
  const TuneTarget& target() const override;
  const SearchSpace& space() const override;
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override;
  void prepare(const std::vector<Configuration>& upcoming) override;
  /// How many workers have been started (1 + restarts after timeouts/crashes).
  [[nodiscard]] unsigned workers_started() const noexcept;
  /// The build pool's size (0: none; EvaluatorConfig::build_jobs resolved),
  /// builder processes started, configurations they built, and those lost
  /// with a builder that died or hung (then built by the worker).
  /// And waited_ms: the time the trials waited for builders (BuildPool::waited_ms()).
  struct PoolCounts {
    unsigned jobs = 0, started = 0;
    std::size_t built = 0, lost = 0;
    double waited_ms = 0;
  };
  [[nodiscard]] PoolCounts pool_counts() const noexcept;
  /// With a pool: enough to keep every builder busy (4 × BuildPool::kInFlight
  /// a builder, at least the default).
  [[nodiscard]] std::size_t announce_ahead() const noexcept override;
  /// The running builder processes' ids (for tests that kill one).
  [[nodiscard]] std::vector<pid_t> builder_pids() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
