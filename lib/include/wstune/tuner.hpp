#pragma once

#include "wstune/export.h"
/// @file tuner.hpp
/// The run-time API for OpenCL applications: ask the store for the local
/// work size of a kernel over a global size on a queue's device, and enqueue
/// with it. Accepts plain cl_kernel / cl_command_queue handles and the C++
/// bindings' cl::Kernel / cl::CommandQueue. C programs use wstune/wstune.h.
///
/// @code
/// wstune::Tuner tuner;                                        // default database
/// auto local = tuner.local_size(queue, kernel, cl::NDRange(1024, 1024));
/// tuner.launch(queue, kernel, cl::NDRange(1024, 1024));      // enqueues with it
/// @endcode
///
/// The kernel is identified by its whole KernelKey (CL_KERNEL_FUNCTION_NAME,
/// the hash of CL_PROGRAM_SOURCE, CL_PROGRAM_BUILD_OPTIONS), the device by
/// DeviceInfo::fingerprint() (query_device_info). A kernel with
/// reqd_work_group_size gets exactly that (LookupLevel::required, no
/// trials); otherwise answers come from the look-up chain (lookup.hpp) and
/// are cached per process. Online tuning (TunerOptions::tune_online) never
/// changes what the app computes: docs/app.md.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "wstune/lookup.hpp"
#include "wstune/store.hpp"
#include "wstune/timing.hpp"

namespace wstune {

/// Online tuning of a T1 tuning file's parameters by Tuner::build_best (C:
/// wstune_set_build_best_online()). When enabled and the parameter look-up
/// chain has no exact stored best for the queue's device and the size (and
/// this Tuner has not tried that device, file and size before), build_best
/// first tunes the file's configurations (tuning parameters and local size)
/// at that size on that device: the search `wstune tune --kernel-file F
/// --size S` runs (the file's Search, else auto; warm-started from the
/// stored bests of other sizes and devices; an unfinished session resumed,
/// nothing measured twice), but in the app's process (InProcessEvaluator:
/// an app has initialised OpenCL, so no worker can be forked) in a context
/// of its own, on the inputs the file describes, never the app's buffers.
/// Every configuration's output is verified against the file's reference
/// (status correctness otherwise, never the best); a configuration that
/// does not compile or run is a stored trial (status compile / runtime) and
/// is skipped; the session, every trial and the best are stored, so the
/// next build_best of that size, in this process or the next, answers
/// exact. Budget: at most `max_evals` configurations and `max_time` of
/// search (a configuration in progress finishes; the confirmation rounds of
/// the fastest few come on top). Any error of the tuning (a driver or
/// database failure, a reference that does not build) never fails
/// build_best: it answers from the chain and says why in BuiltKernel::note.
/// A kernel that hangs hangs the app, as with TunerOptions::tune_online
/// (both run in the app's process): tune such kernels offline.
/// docs/app.md "Online tuning of the parameters".
struct BuildBestOnline {
  bool enabled = false;     ///< tune at build_best when nothing exact is stored
  unsigned max_evals = 20;  ///< at most this many configurations measured, the baseline included; ≥ 1
  std::chrono::milliseconds max_time{10'000};  ///< at most this long a search (ms); > 0
};

/// How a Tuner behaves.
struct TunerOptions {
  LookupOptions lookup;  ///< the look-up chain's options
  StoreOptions store;    ///< how to open the database (path constructor only)
  /// When the look-up chain has no exact, forced or near (LookupLevel::nearest)
  /// answer, launch() first tunes online (tune()): with the kernel's current
  /// arguments it measures NULL, the paper's rule and the guided searcher's
  /// shapes within the budget below, verifies every shape's output against
  /// NULL's, restores the buffers the kernel writes, and stores every trial
  /// and the best. Refused (UsageError) for kernels wstune cannot run safely:
  /// see Tuner::tune().
  bool tune_online = false;
  unsigned online_max_trials = 12;                  ///< at most this many configurations in the search
  std::chrono::milliseconds online_max_time{2000};  ///< and at most this long (the final rounds come on top)
  TimingOptions online_timing{1, 3};                ///< warm-up and repetitions per configuration in the search
  /// Final rounds: NULL and the up to final_candidates fastest correct shapes
  /// run once each per round, interleaved (a steady-state A/B), for at most
  /// final_rounds rounds or final_max_time (at least 5 rounds); the stored
  /// best and its ratio to NULL are the medians of these rounds.
  unsigned final_rounds = 50;
  unsigned final_candidates = 3;                   ///< shapes besides NULL in the final rounds
  std::chrono::milliseconds final_max_time{1000};  ///< time bound of the final rounds
  /// 0: launch() runs the whole online search at the first launch of a
  /// size (blocking, bounded by online_max_time plus the final rounds).
  /// N > 0: dynamic tuning, as KTT's: each launch() measures at most N new
  /// configurations of the online session (resumed from the store, nothing
  /// measured twice), restores the app's buffers, then enqueues the fastest
  /// correct configuration measured so far (LookupLevel::online; the
  /// look-up chain's answer while none ran correctly). The launch that spends the session's trials
  /// (online_max_trials) or time (online_max_time, summed over this
  /// process's launches) also runs the final rounds and stores the best;
  /// later launches use it (LookupLevel::exact). Bounds each launch's extra
  /// cost to N trials.
  unsigned online_trials_per_launch = 0;
  /// Online tuning of a tuning file's parameters by build_best(); checked
  /// by the constructor (UsageError for a bad budget).
  BuildBestOnline build_best_online = {};
};

/// Sets `kernel`'s __local pointer arguments (clSetKernelArg with a size
/// and NULL value) for a launch with `local` work-items per group (nullopt:
/// the driver chooses). Returns false when the kernel cannot run with that
/// local size (e.g. nullopt for a kernel that must know its group size); the
/// configuration is then refused (TrialStatus::constraints) and launch()
/// throws UsageError for it. Called before every trial and every launch.
using LocalArgsSetter = std::function<bool(cl_kernel kernel, const LocalSize& local)>;

/// What an app tells wstune about one of its kernels (Tuner::set_kernel_options).
struct KernelOptions {
  /// The kernel checks its work-item ids against the real size (e.g.
  /// `if (i >= n) return;`): wstune may round the NDRange up to a multiple
  /// of the local size (padded_global()), so any shape is possible, not
  /// only divisors (a prime size no longer means local size 1). On devices
  /// with non-uniform work-groups (non_uniform_allowed()) no padding is
  /// needed and none is used.
  bool bounds_guarded = false;
  /// Sizes the kernel's __local pointer arguments for a local size; needed
  /// to tune or launch a kernel that has such arguments.
  LocalArgsSetter local_args;
  /// Indices of the arguments the kernel may write. Default (nullopt): the
  /// __global pointer arguments not declared const (clGetKernelArgInfo,
  /// OpenCL 1.2 §5.7.3); required when the driver gives no argument info
  /// (build with -cl-kernel-arg-info).
  std::optional<std::vector<cl_uint>> written_args;
  /// Relative tolerance when a trial's float or double output is compared
  /// with NULL's (|a − b| ≤ tolerance · max(|a|, |b|)); 0: byte-exact. Other
  /// element types are always compared byte for byte.
  double tolerance = 0;
};

/// A kernel described by a T1 tuning file, built with the configuration the
/// parameter look-up chain chose for one problem size (Tuner::build_best).
/// Holds its own references to the program and kernel (the cl:: wrappers
/// release them when the last copy goes); the kernel's arguments are not
/// set: the app sets them (in the file's Arguments order) and enqueues
/// `kernel` over `global` with `local`.
struct BuiltKernel {
  cl::Program program;  ///< the program, built for the queue's device in the queue's context
  cl::Kernel kernel;    ///< the tuning file's KernelName in it
  /// The NDRange for this size and configuration (work-items; rounded up to
  /// a multiple of `local` for a kernel whose file says it guards its bounds).
  cl::NDRange global;
  cl::NDRange local;  ///< the local size; cl::NullRange: the driver's choice
  /// Which level chose it: exact, nearest, architecture, vendor_type (stored
  /// bests), defaults (the file's Default values) or reference.
  LookupLevel level = LookupLevel::reference;
  std::string params;              ///< the parameters' values, a JSON object
  std::string build_options;       ///< the clBuildProgram options it was built with
  std::optional<BestConfig> from;  ///< the stored best it came from (stored levels)
  double distance = 0;             ///< problem_distance() to `from`'s size
  /// clBuildProgram wall time of this call (ms); 0 when this Tuner had built
  /// the same program for the same device and context before.
  double compile_ms = 0;
  /// True when this call compiled the program from source; false when it
  /// loaded its binary from the persistent program binary cache or this
  /// Tuner had built it before (a second start of an app compiles nothing).
  bool compiled = false;
  /// Configurations measured by online tuning in this call (BuildBestOnline;
  /// 0 when it did not run). level is LookupLevel::online when it stored
  /// the best this kernel was built with.
  unsigned tuned_evaluations = 0;
  /// Why online tuning ran but did not give the answer (it failed, or no
  /// configuration ran correctly), and that the chain answered instead;
  /// "" otherwise.
  std::string note;
};

/// The program builds of this process so far (every build of libwstune:
/// build_best(), tuning trials), by how each was obtained. Thread-safe.
struct ProgramBuilds {
  std::uint64_t compiled = 0;        ///< compiled from source (clCreateProgramWithSource), successful or not
  std::uint64_t from_binary = 0;     ///< loaded from the persistent program binary cache
  std::uint64_t known_failures = 0;  ///< sources the cache knows do not compile: not compiled again
};

/// This process's ProgramBuilds (thread-safe). The persistent cache's
/// folder: WSTUNE_CACHE_DIR, else $XDG_CACHE_HOME/wstune/programs, else
/// ~/.cache/wstune/programs; WSTUNE_CACHE_DIR=off turns it off (docs/tuning.md).
WSTUNE_EXPORT ProgramBuilds program_builds() noexcept;

/// An NDRange (cl::NDRange) of 1 to 3 dimensions as an Extent; throws UsageError for a 0-D range.
WSTUNE_EXPORT Extent extent_of(const cl::NDRange& range);

/// Looks up and applies stored local work sizes. Not thread-safe: one per
/// thread (or one at a time). Kernels are remembered by their cl_kernel
/// handle: call forget() before releasing a kernel whose handle may be reused.
class WSTUNE_EXPORT Tuner {
 public:
  /// Opens the database at `db_path` (default_db_path() when empty; created
  /// if missing). Throws StoreError.
  explicit Tuner(const std::string& db_path = {}, TunerOptions options = {});
  /// Uses an open store (not owned; must outlive the Tuner).
  explicit Tuner(Store& store, TunerOptions options = {});
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  /// Declares how `kernel` may be run and tuned (replaces earlier options).
  void set_kernel_options(cl_kernel kernel, KernelOptions options);
  /// Sets buffer argument `index` of `kernel` (clSetKernelArg) and remembers
  /// the buffer, so that online tuning can snapshot and restore what the
  /// kernel writes. Set every buffer the kernel may write this way before a
  /// launch that may tune. Throws ClError when clSetKernelArg fails.
  void set_arg(cl_kernel kernel, cl_uint index, cl_mem buffer);
  /// set_arg() for the C++ bindings.
  void set_arg(const cl::Kernel& kernel, cl_uint index, const cl::Buffer& buffer);
  /// Forgets what is known about `kernel` (options, buffers, queried facts).
  void forget(cl_kernel kernel);

  /// The answer for `kernel` over `global` (1 to 3 dimensions) on `queue`'s
  /// device: its reqd_work_group_size (LookupLevel::required), else the
  /// look-up chain's, valid for the kernel (CL_KERNEL_WORK_GROUP_SIZE,
  /// bounds_guarded, non-uniform work-groups). Never tunes. Throws ClError
  /// when a handle is invalid, UsageError for a bad `global`, StoreError on
  /// a database failure.
  LookupResult lookup(cl_command_queue queue, cl_kernel kernel, const Extent& global);
  /// lookup().local.
  LocalSize local_size(cl_command_queue queue, cl_kernel kernel, const Extent& global);
  /// lookup().local for the C++ bindings.
  LocalSize local_size(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global);

  /// Enqueues `kernel` over `global` with the answer (tuning online first
  /// when TunerOptions::tune_online says so and there is no exact, forced,
  /// near or required answer), after the kernel's local_args setter; a
  /// bounds-guarded kernel on a device without non-uniform work-groups runs
  /// the padded NDRange. Stores the kernel's event in `event` when not null.
  /// Returns the answer used. Throws UsageError when the kernel cannot run
  /// with it (a __local argument and no setter; reqd_work_group_size that
  /// does not divide `global`), ClError when the enqueue fails; nothing is
  /// enqueued then.
  LookupResult launch(cl_command_queue queue, cl_kernel kernel, const Extent& global, cl_event* event = nullptr);
  /// launch() for the C++ bindings.
  LookupResult launch(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global,
                      cl::Event* event = nullptr);

  /// Tunes online now (see TunerOptions::tune_online), stores the session,
  /// its trials and the best configuration, and returns the new answer.
  /// The buffers the kernel writes hold what they held before when it
  /// returns. Resumes an unfinished online session of the same key without
  /// measuring a configuration twice. A kernel with reqd_work_group_size is
  /// not tuned (its answer is returned). Throws UsageError, before running
  /// anything, when tuning could change the app's data or results: a
  /// __local argument without a KernelOptions::local_args setter, a written
  /// buffer argument not given through set_arg(), a writable image argument,
  /// or no argument info and no KernelOptions::written_args. Throws
  /// ClError / StoreError on a driver or database failure.
  LookupResult tune(cl_command_queue queue, cl_kernel kernel, const Extent& global);

  /// Builds the kernel of the T1 tuning file at `tuning_file` (read and
  /// validated once per Tuner; docs/tuning-files.md) for problem size
  /// `size` ("" = the file's ProblemSize; the syntax of `wstune tune
  /// --size`) on `queue`'s device, in `queue`'s context, with the
  /// configuration of the parameter look-up chain: a stored best of this
  /// device and size (exact), of the nearest tuned size on this device
  /// (nearest; within LookupOptions::max_distance and only a best that beat
  /// the reference configuration by LookupOptions::min_speedup), of another
  /// device of the same architecture or vendor and type, else the file's
  /// Default values, else the reference configuration; a stored one is used
  /// only where it is valid at `size` (Conditions, NDRange, device limits).
  /// With TunerOptions::build_best_online enabled and no exact stored best,
  /// it first tunes the file at `size` on the queue's device and stores the
  /// result (BuildBestOnline; LookupLevel::online when that best is built;
  /// a failed tuning is BuiltKernel::note and the chain's answer, never an
  /// exception).
  /// The program goes through the same build as every trial's (one build
  /// function, through the persistent program binary cache: a later process
  /// loads the binary instead of compiling, BuiltKernel::compiled); programs
  /// are kept per Tuner, keyed by device, context and options. Throws UsageError for a bad file or size (naming it) or
  /// no valid configuration, BuildError when the chosen configuration does not compile, ClError for a bad queue,
  /// StoreError on a database failure.
  BuiltKernel build_best(cl_command_queue queue, const std::string& tuning_file, const std::string& size = {});
  /// build_best() for the C++ bindings.
  BuiltKernel build_best(const cl::CommandQueue& queue, const std::string& tuning_file, const std::string& size = {});

  /// Sets TunerOptions::build_best_online for later build_best() calls.
  /// Throws UsageError, naming the field and the fix, when `online` is
  /// enabled with max_evals 0 or a max_time ≤ 0 (the options stay as they were).
  void set_build_best_online(const BuildBestOnline& online);

  /// Sets TunerOptions::online_trials_per_launch for later launches (0:
  /// blocking online tuning at the first launch).
  void set_online_trials_per_launch(unsigned n) noexcept;

  /// The device model of `queue`'s device (queried once per device).
  const DeviceInfo& device_info(cl_command_queue queue);
  /// The kernel's identity as wstune stores it (queried once per kernel and device).
  const KernelKey& kernel_key(cl_command_queue queue, cl_kernel kernel);
  /// The store.
  [[nodiscard]] Store& store() const noexcept;
  /// The look-up chain (e.g. to clear its cache).
  [[nodiscard]] Lookup& lookup_chain() const noexcept;

 private:
  struct WSTUNE_NO_EXPORT Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
