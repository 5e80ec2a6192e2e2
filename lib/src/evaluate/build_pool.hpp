#pragma once
/// @file build_pool.hpp
/// Builds ahead of the device: a pool of builder processes that compile the
/// programs of the configurations a search will measure next into the
/// program binary cache (program_cache/program_cache.hpp), while the one
/// timing process (IsolatedEvaluator's worker) measures and, for each
/// configuration, loads the binary a builder left instead of compiling.
///
/// Each builder is a forked child (child_process.hpp) that opens the same
/// device in its own OpenCL context and builds what it is handed, in order,
/// answering one frame per configuration (DeviceRunner::precompile); on
/// NVIDIA it also builds the stored binary once, so the driver's own cache
/// of the PTX JIT is warm for the timing process. The tuner hands each new
/// configuration to the builder with the shortest queue (submit()) and,
/// before a configuration's trial, waits for its builder's answer (await()).
/// A builder that dies (a configuration that crashes the compiler) or makes
/// no progress within the limit is killed; the configurations it held are
/// then built by the timing process itself, under the trial's isolation, and
/// a compile failure is the trial's status as without the pool. Dead
/// builders are replaced on later submits, a bounded number of times.
///
/// The pool forks, so the calling process must not have initialised OpenCL
/// (as IsolatedEvaluator). docs/tuning.md "Builds ahead of the device".

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <string>
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
  /// A pool of `builders` processes for `spec` (which must outlive it) on
  /// `problem` and `cfg.device` with `cfg.build_options`; started lazily on
  /// the first submit(). `progress_limit`: a builder that answers nothing
  /// for this long while holding work is killed.
  BuildPool(const KernelSpec& spec, Problem problem, EvaluatorConfig cfg, unsigned builders,
            std::chrono::milliseconds progress_limit);
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  /// Hands the parameter sets not handed before to the builders (never
  /// waits for a build). Never throws: a builder that cannot start or be
  /// written to only loses its work.
  void submit(const std::vector<nlohmann::json>& params);
  /// Waits until the builder handed `params` has built it (true: its
  /// program, or its compile failure, is in the cache), or it died or hung
  /// (false: the caller builds it). False at once for parameters never
  /// handed or already lost.
  bool await(const nlohmann::json& params);

  /// Builder processes started so far (restarts included).
  [[nodiscard]] unsigned builders_started() const noexcept { return started_; }
  /// Configurations the builders answered for.
  [[nodiscard]] std::size_t built() const noexcept { return built_; }
  /// Configurations lost with a builder that died or hung.
  [[nodiscard]] std::size_t lost() const noexcept { return lost_; }
  /// The running builders' process ids (for tests that kill one).
  [[nodiscard]] std::vector<pid_t> builder_pids() const;

 private:
  struct Builder {
    ChildProcess process;
    std::deque<std::string> queue;  // keys handed, oldest first
    bool hello = false;             // its hello has arrived
    bool dead = false;              // it died or hung: replaced on the next submit
  };
  enum class State { queued, built, lost };

  void start(Builder& b);
  Builder* least_loaded();
  // Takes one answer of `b`'s (waiting until `deadline`); false when it died or hung.
  bool take_answer(Builder& b, SocketClock::time_point deadline);
  void drain(Builder& b);  // takes the answers that have already arrived
  void bury(Builder& b);   // kills it; its queued configurations are lost

  const KernelSpec& spec_;
  Problem problem_;
  EvaluatorConfig cfg_;
  std::chrono::milliseconds progress_limit_;
  std::vector<Builder> builders_;
  std::map<std::string, std::pair<State, std::size_t>> state_;  // key → state, builder index
  unsigned started_ = 0, restarts_left_;
  std::size_t built_ = 0, lost_ = 0;
};

}  // namespace wstune
