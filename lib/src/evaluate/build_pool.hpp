#pragma once
/// @file build_pool.hpp
/// Builds ahead of the device: a pool of builder processes that compile the
/// programs of the configurations a search will measure next into the
/// program binary cache (program_cache/program_cache.hpp), while the one
/// timing process (IsolatedEvaluator's worker) measures and, for each
/// configuration, loads the binary a builder left instead of compiling.
///
/// Each builder is a forked child (child_process.hpp) that opens the same
/// device in its own OpenCL context (at a lower scheduling priority than the
/// timing process: nice +10) and builds what it is handed, in order,
/// answering one frame per configuration (DeviceRunner::precompile); on
/// NVIDIA it also builds the stored binary once, so the driver's own cache
/// of the PTX JIT is warm for the timing process.
///
/// Work is pulled, not pushed: announced configurations (submit()) wait in
/// one queue, in the order announced, and each builder that has said hello
/// is handed at most kInFlight of them at a time, the next one as each
/// answer arrives. So the first builder to open the device takes the first
/// configurations, a slow build holds up nothing but itself, and every
/// builder stays busy while announced work is left. Before a
/// configuration's trial the tuner waits for it (await()), handing out work
/// to builders that free up meanwhile; a configuration still queued moves
/// to the queue's front. The timing process never builds what a builder
/// holds. A builder that dies (a configuration that crashes the compiler)
/// or makes no progress within the limit is killed; the configurations it
/// held are then built by the timing process itself, under the trial's
/// isolation, and a compile failure is the trial's status as without the
/// pool. Dead builders are replaced while work is queued, a bounded number
/// of times; queued work is lost only when no builder is left.
///
/// The pool forks, so the calling process must not have initialised OpenCL
/// (as IsolatedEvaluator). docs/tuning.md "Builds ahead of the device".

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluate/child_process.hpp"
#include "evaluate/trial.hpp"

namespace wstune {

/// The default size of a build pool for a device of `device_type`
/// (DeviceInfo::type): the host's cores less one (at least one) for a GPU or
/// accelerator; 0 (no pool) for a CPU device, whose builds would take the
/// cores its timed runs use.
unsigned default_build_jobs(std::string_view device_type);

/// Builder processes for one kernel, problem and device (see the file comment).
class BuildPool {
 public:
  /// Configurations a builder holds at once (one building, the next ready):
  /// it goes on to the next while the tuner is busy with a trial.
  static constexpr std::size_t kInFlight = 2;

  /// A pool of `builders` processes for `spec` (which must outlive it) on
  /// `problem` and `cfg.device` with `cfg.build_options`; started by start()
  /// or else on the first submit(). `progress_limit`: a builder that answers
  /// nothing for this long while starting or holding work is killed.
  BuildPool(const KernelSpec& spec, Problem problem, EvaluatorConfig cfg, unsigned builders,
            std::chrono::milliseconds progress_limit);
  /// Tells every builder to stop and leaves their exit (an OpenCL context's
  /// teardown each) to background threads (ChildProcess::stop_in_background).
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  /// Forks the builders now (all at once; each opens the device side by
  /// side with the others), unless started already. Never throws.
  void start();
  /// Queues the parameter sets not submitted before, in this order, and
  /// hands builders that are free their share (never waits for a build).
  /// Never throws: a builder that cannot start or be written to only loses
  /// the work it held.
  void submit(const std::vector<nlohmann::json>& params);
  /// Waits until a builder has built `params` (true: its program, or its
  /// compile failure, is in the cache), handing out queued work meanwhile;
  /// false when the builder holding it died or hung, or no builder is left
  /// (the caller builds it). False at once for parameters never submitted
  /// or already awaited.
  bool await(const nlohmann::json& params);

  /// Builder processes started so far (restarts included).
  [[nodiscard]] unsigned builders_started() const noexcept { return started_; }
  /// Configurations the builders answered for.
  [[nodiscard]] std::size_t built() const noexcept { return built_; }
  /// Configurations lost with a builder that died or hung, or with no builder left.
  [[nodiscard]] std::size_t lost() const noexcept { return lost_; }
  /// Time await() spent waiting for builders, ms (the timing process's idle time).
  [[nodiscard]] double waited_ms() const noexcept { return waited_ms_; }
  /// The running builders' process ids (for tests that kill one).
  [[nodiscard]] std::vector<pid_t> builder_pids() const;

 private:
  enum class State { queued, building, built, lost };
  struct Builder {
    ChildProcess process;
    std::deque<std::string> holds;  // keys handed, oldest first (at most kInFlight)
    SocketClock::time_point since;  // its start or its last answer
    bool hello = false;             // its hello has arrived
    bool dead = false;              // it died or hung
  };
  struct Entry {
    State state = State::queued;
    nlohmann::json params;  // while queued
  };

  void start(Builder& b);
  void revive();  // replaces dead builders while work is queued
  void feed();    // hands queued work to builders with room
  // Takes the answers that have arrived, waiting until one does or `deadline` passes.
  void pump(SocketClock::time_point deadline);
  bool take_answer(Builder& b);  // false: it died
  void bury(Builder& b);         // kills it; what it held is lost
  void hang_check();             // buries builders past the progress limit
  [[nodiscard]] bool any_alive() const;

  const KernelSpec& spec_;
  Problem problem_;
  EvaluatorConfig cfg_;
  std::chrono::milliseconds progress_limit_;
  std::vector<Builder> builders_;
  std::deque<std::string> queue_;                   // keys submitted and not handed out, in order
  std::unordered_map<std::string, Entry> entries_;  // keys submitted and not awaited yet
  std::unordered_set<std::size_t> seen_;            // every key submitted, hashed (a clash: the worker builds it)
  unsigned started_ = 0, restarts_left_;
  bool starting_done_ = false;
  std::size_t built_ = 0, lost_ = 0;
  double waited_ms_ = 0;
};

}  // namespace wstune
