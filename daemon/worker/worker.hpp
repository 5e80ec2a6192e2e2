#pragma once
/// @file worker.hpp
/// wstuned's worker (ranks 1..N−1): registers its one OpenCL device with the
/// master, then runs blocks, tunes and calibrates on request until shutdown.
/// A failing build or kernel is answered with Tag::worker_error (status class
/// and text), never an abort.

#include <chrono>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>

#include "evaluate/trial.hpp"
#include "evaluate/trial_energy.hpp"
#include "observe/observer.hpp"
#include "runner/runner.hpp"
#include "transport/communicator.hpp"
#include "transport/result_memory.hpp"

namespace wstune::daemon {

/// Faults a worker can be told to inject (tests of the master's fault policy).
enum class FaultKind {
  none,    ///< behave
  build,   ///< build every program with an invalid option (a real CL_INVALID_BUILD_OPTIONS)
  kernel,  ///< report every block as a failed kernel (runtime) without running it
  hang,    ///< never answer run/tune/calibrate requests (still obeys shutdown)
  crash,   ///< the isolated OpenCL process raises SIGSEGV on every request (isolation.hpp only)
  stall    ///< the isolated OpenCL process never answers a request (isolation.hpp only)
};
/// "none", "build", "kernel", "hang", "crash", "stall".
std::string_view to_string(FaultKind f) noexcept;
/// Parses "build", "kernel", "hang", "crash" or "stall"; throws UsageError
/// naming the choices.
FaultKind parse_fault(std::string_view text);

/// Runs a worker's OpenCL work elsewhere (isolation.hpp: in a child
/// process). The worker hands it every run_block, tune and calibrate
/// request and sends the master what it returns.
class WorkDelegate {
 public:
  virtual ~WorkDelegate() = default;
  /// The answer to `request` for the master: block_result, worker_error,
  /// tune_result or calibrate_result. Never throws for a failing kernel.
  virtual Message handle(Received& request) = 0;
};

/// Worker settings.
struct WorkerOptions {
  std::string host;                                    ///< host name reported at registration
  std::string selector;                                ///< device selector it used (reported)
  FaultKind fault = FaultKind::none;                   ///< injected fault
  int protocol = kProtocolVersion;                     ///< version announced (tests of the mismatch path)
  std::chrono::milliseconds welcome_timeout{120'000};  ///< wait for the master's welcome
  std::function<bool()> stop_requested;                ///< a signal arrived (may be empty)
  std::chrono::milliseconds stop_grace{10'000};        ///< after a signal, wait this long for shutdown
  /// After a signal, leave at once (a bye with a reason, status 0) instead of
  /// waiting for the master's shutdown: a worker connected over TCP
  /// (`wstuned worker --connect`) is drained so; an MPI rank cannot leave
  /// its launch.
  bool leave_on_stop = false;
  std::ostream* log = nullptr;  ///< messages (stderr), or none
  /// Where requests run; null: in this process (the worker's own device).
  /// With a delegate the worker never touches OpenCL; `hang` still applies.
  WorkDelegate* delegate = nullptr;
  /// Where a block's results are read back (DeviceRunner::run's output_memory):
  /// the isolated process's SharedMemory, so they reach the rank without a
  /// copy; null: the heap. Must outlive the worker.
  std::pmr::memory_resource* output_memory = nullptr;
  /// The device's energy observer (observe/observer.hpp), opened once before
  /// the worker registers: read around every run_block (BlockResult::joules)
  /// and, when a tune job asks (WorkRequest::energy), around each trial's
  /// observation window. With a delegate the isolated process opens its own.
  EnergyOptions energy = {};
};

/// The worker loop.
class Worker {
 public:
  /// `device` is the device it opened, or empty with `device_error` saying
  /// why (it then registers without one and is refused).
  Worker(Communicator& comm, std::optional<Device> device, std::string device_error, WorkerOptions options);
  ~Worker();
  /// Registers and serves until shutdown. Returns 0 after a shutdown (or,
  /// with leave_on_stop, after a signal: drained), 3 when refused at
  /// registration, 4 when the master vanished (no welcome, its connection
  /// ended, or a signal with no shutdown within the grace time).
  int serve();

 private:
  using time_point = std::chrono::steady_clock::time_point;
  void send_hello();
  int leave(const std::string& reason);
  std::optional<int> given_up(std::optional<time_point> stop_seen, bool welcomed, time_point welcome_deadline);
  std::optional<int> take(Received& got, bool& welcomed);
  std::optional<int> take_welcome(const Received& got, bool& welcomed);
  void handle_request(Received& got);
  void handle_run(Received& got);
  void answer_run(const RunBlock& job, const std::vector<HostBuffer>& sent, double recv_ms, time_point t0);
  void send_run_error(const RunBlock& job, TrialStatus status, const std::string& text);
  void out_of_memory(const RunBlock& job);
  LocalSize block_local(DeviceRunner& runner, const Problem& p, const RunBlock& job,
                        const std::vector<HostBuffer>& inputs, BlockResult& res);
  LocalSize policy_local(DeviceRunner& runner, const Problem& p, const RunBlock& job,
                         const std::vector<HostBuffer>& inputs, BlockResult& res);
  RunResult run_job_block(DeviceRunner& runner, const KernelSpec& spec, const Problem& p, const RunBlock& job,
                          const std::vector<HostBuffer>& inputs, BlockResult& res, std::pmr::memory_resource* memory);
  std::pmr::memory_resource* output_memory_for(const RunBlock& job, BlockResult& res);
  std::vector<HostBuffer> outputs_to_send(std::vector<HostBuffer>& outputs, BlockResult& res, bool in_slot) const;
  void handle_work(const Received& got);
  void handle_trial(const Received& got);
  void delegate(Received& got);
  void delegate_trial(Received& got);
  DeviceRunner& runner_for(const KernelSpec& spec, const std::string& key, double* build_ms);
  const std::vector<HostBuffer>& inputs_for(const KernelSpec& spec, const std::string& key, const Problem& p,
                                            std::uint64_t seed, double* ms);
  const std::vector<HostBuffer>& block_inputs_for(const KernelSpec& spec, const std::string& key, const Problem& p,
                                                  std::uint64_t seed, const Block& b, double* ms);
  const std::vector<HostBuffer>& sent_block_inputs(const KernelSpec& spec, const std::string& key, const Problem& p,
                                                   const RunBlock& job, const std::vector<HostBuffer>& sent);
  void say(const std::string& line);
  void open_energy_observer();
  [[nodiscard]] TrialEnergy trial_energy(bool asked) const;
  Communicator& comm_;
  std::optional<Device> device_;
  std::string device_error_;
  WorkerOptions opt_;
  // The master's result slot, when it names one (result_memory.hpp); what
  // does not fit comes from opt_.output_memory.
  ResultTarget results_;
  std::map<std::string, std::unique_ptr<DeviceRunner>> runners_;
  // The problem inputs last generated (key: kernel|size|params|seed).
  std::pair<std::string, std::vector<HostBuffer>> inputs_;
  // Master-sent inputs (RunBlock::sent_inputs): those of inputs_ received whole.
  std::set<std::size_t> whole_inputs_;
  // The block inputs last uploaded (key: inputs_'s key|block).
  std::pair<std::string, std::vector<HostBuffer>> block_inputs_;
  // The job prepared for trials (Tag::tune) and its evaluator.
  std::uint64_t prepared_job_ = 0;
  std::unique_ptr<Evaluator> prepared_;
  // With a delegate: the last Tag::tune request, re-sent to a new isolated
  // process before a trial (the old one died and took the preparation along).
  std::optional<Received> setup_;
  // Its rank: the communicator's, or the one the welcome names (TCP).
  int rank_ = 0;
  // The device's energy observer (null: none, energy_note_ says why).
  std::shared_ptr<EnergyObserver> observer_;
  std::string energy_note_ = "no device";
};

/// The start of a worker_error's text when a trial names a job the worker
/// has not prepared (Tag::tune); the rank then prepares it and retries.
inline constexpr std::string_view kNotPrepared = "not prepared";

}  // namespace wstune::daemon
