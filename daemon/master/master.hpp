#pragma once
/// @file master.hpp
/// wstuned's master (rank 0): registers the workers, runs jobs over them
/// (split, send slices, gather, verify; paper §3.1.1), tunes and calibrates
/// through them, records everything in a ResultSink and shuts them down.
/// Fault policy (docs/daemon.md): a worker that reports an error for a job
/// is left out of that job, which is re-split over the healthy workers; a
/// worker that does not answer within the timeout is reported by rank and
/// host and dropped for good; a job with no healthy worker left fails and
/// the master goes on with the next one.

#include <chrono>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/router.hpp"
#include "master/shared_search.hpp"
#include "master/split_plan.hpp"
#include "master/timeline.hpp"
#include "protocol/jobs.hpp"
#include "store/calibration_row.hpp"
#include "transport/communicator.hpp"
#include "transport/result_memory.hpp"
#include "wstune/store.hpp"

namespace wstune::daemon {

/// What the master knows about one worker.
struct WorkerState {
  int rank = 0;                      ///< MPI rank
  std::string host;                  ///< host name
  std::string selector;              ///< its device selector
  std::optional<DeviceInfo> device;  ///< its device model (empty: none)
  bool registered = false;           ///< sent a hello
  bool accepted = false;             ///< passed registration (version, device)
  bool alive = true;                 ///< has not timed out
  bool gone = false;                 ///< left the pool: drained, or its connection ended (gets no shutdown)
  std::string peer;                  ///< how it is reached: "tcp ADDRESS:PORT", or "" (an MPI rank)
  std::string problem;               ///< why it is not usable
  /// Accepted and alive.
  [[nodiscard]] bool usable() const noexcept { return registered && accepted && alive; }
  /// "rank 2 on host (device)" for messages; a TCP worker's adds "via tcp ADDRESS:PORT".
  [[nodiscard]] std::string label() const;
};

/// One worker's part of one job.
struct WorkerPart {
  int rank = 0;                 ///< MPI rank
  std::string host;             ///< host name
  std::string device;           ///< device name
  std::string fingerprint;      ///< DeviceInfo::fingerprint()
  Block block;                  ///< its block
  double share = 0;             ///< fraction of the split units
  LocalSize local;              ///< local size it ran with
  std::string local_source;     ///< where that local size came from
  double kernel_ms = 0;         ///< sum of its timed kernel runs (profiling events)
  double kernel_median_ms = 0;  ///< median kernel run
  double transfer_ms = 0;  ///< input message receive (at the worker) + upload + read-back (wall clock, host staging
                           ///< included) + return_ms
  double return_ms = 0;    ///< the result message's receive at the master (MPI transfer back), ms
  double busy_ms = 0;      ///< worker wall clock, receipt to reply
  double build_ms = 0;     ///< this job's program builds, a new runner's set-up included (0 when all cached)
  double inputs_ms = 0;    ///< the worker's input generation (inside busy_ms; 0 when cached)
  double answer_ms = 0;    ///< from the job's start (first send) to its result at the master
  double fixed_ms = 0;     ///< the fixed cost per job the measured plan assumed for it (learned from earlier jobs)
  double scale = 1;        ///< the measured plan's factor on its whole-block prediction (SplitWorker::scale)
  /// Where its outputs came back: "slot" (left in the master's memory by a
  /// worker on its host, result_memory.hpp), "message" (bytes over MPI), or
  /// "mixed" (some did not fit the slot).
  std::string result_path = "message";
  std::size_t chunks = 1;      ///< sub-blocks its block ran as (overlapped when > 1; the job's `overlap` at most)
  double overlap_wall_ms = 0;  ///< overlapped: wall clock of its upload, runs and read-back together (0: whole)
  double recv_ms = 0;          ///< the worker's receive of its run_block message (inside transfer_ms)
  /// Its time in the job: kernel_ms + transfer_ms, or for an overlapped part
  /// (its transfers overlap its kernels) recv_ms + overlap_wall_ms + return_ms.
  [[nodiscard]] double device_ms() const noexcept {
    return overlap_wall_ms > 0 ? recv_ms + overlap_wall_ms + return_ms : kernel_ms + transfer_ms;
  }
  nlohmann::json trials = nlohmann::json::array();  ///< tune-policy trials
  /// The joules its device's energy sensor counted while it worked on its
  /// block (BlockResult::joules: receipt to reply); none without a sensor.
  std::optional<double> joules;
  std::string energy_sensor;  ///< "nvml", "rapl", ... ("" without joules)
  std::string energy_note;    ///< why no joules ("" with them)
};

/// The outcome of one job.
/// What became of a job (JobReport::status).
enum class JobStatus {
  ok,           ///< done: run gathered and verified its result; tune and calibrate have results from workers
  failed,       ///< not done; JobReport::error says why
  interrupted,  ///< a stop was requested (SIGINT, SIGTERM) before it was done
  stored        ///< nothing ran: an earlier run stored its result (--resume), or every device is tuned for it
};
/// "ok", "failed", "interrupted" or "stored": the status's text in the JSON
/// report, the table and the progress lines.
std::string_view to_string(JobStatus s) noexcept;
/// Inverse of to_string(JobStatus); throws UsageError naming the four.
JobStatus parse_job_status(std::string_view text);

struct JobReport {
  std::uint64_t id = 0;              ///< job id (1-based)
  Mode mode = Mode::run;             ///< mode
  Job job;                           ///< the job
  std::string size;                  ///< canonical size text
  JobStatus status = JobStatus::ok;  ///< what became of it
  std::string run_key;               ///< run_key() of the job list it belongs to ("" when run alone)
  std::size_t index = 0;             ///< its position in that job list (0-based)
  std::string error;                 ///< why it failed
  std::vector<std::string> faults;   ///< worker faults met on the way (rank, host, class, text)
  unsigned attempts = 0;             ///< splits tried
  SplitPlan plan;                    ///< the split that succeeded (run)
  std::vector<WorkerPart> parts;     ///< per worker (run)
  double makespan_ms = 0;            ///< first send to last result (run)
  double overhead_ms = 0;            ///< makespan − max over workers of WorkerPart::device_ms()
  double verify_ms = 0;              ///< inputs and CPU reference on the master + comparison (outside the makespan)
  /// Run with MasterOptions::timeline: the job's timeline ({"job","kernel",
  /// "size","inputs","overlap","makespan_ms","workers":[part_timeline()..],
  /// "critical_path":critical_path()}); null otherwise.
  nlohmann::json timeline;
  Verdict verdict;                                ///< verification (run)
  nlohmann::json data = nlohmann::json::array();  ///< tune / calibrate: per worker results
  /// run: the job's joules, the sum of its parts' (WorkerPart::joules), or
  /// none when a part has none (joules_note() says which and why).
  [[nodiscard]] std::optional<double> joules() const;
  /// run: "" with joules(); else "not measured: r1, r2 (WHY); r3 (WHY)"
  /// naming each part without joules, grouped by why (or "no part ran").
  [[nodiscard]] std::string joules_note() const;
  /// True when status is ok, or stored (done by an earlier run).
  [[nodiscard]] bool ok() const noexcept { return status == JobStatus::ok || status == JobStatus::stored; }
};

/// The identity of a job list in a mode: 16 hex digits (FNV-1a of the mode
/// and the jobs' JSON). A run job's stored record carries it with the job's
/// index, so `--resume` can tell which jobs of the same list are stored.
std::string run_key(Mode mode, const std::vector<Job>& jobs);

/// JSON form of a report (for --json and the store's detail).
nlohmann::json to_json(const JobReport& r);

/// Where the master records what it learns; implementations persist it (the
/// SQLite store) or keep it (tests). Only the master holds one.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  /// The registered workers (called once after registration).
  virtual void workers(const std::vector<WorkerState>& workers) = 0;
  /// A finished run-mode job (ok or failed).
  virtual void run(const JobReport& report) = 0;
  /// One worker's tune result for a job: {"trials":[...], "best":..}
  /// (docs/daemon.md), after its group's search ended (the trials are
  /// already in the group's TrialLog).
  virtual void tuned(const WorkerState& worker, const Job& job, const std::string& size,
                     const nlohmann::json& result) = 0;
  /// The log of one group's search of `spec` on `target` (its device,
  /// kernel and problem): an unfinished session of the same device, kernel,
  /// problem and strategy whose writer is gone is resumed.
  virtual std::unique_ptr<TrialLog> open_trial_log(const KernelSpec& spec, const TuneTarget& target,
                                                   const SessionSpec& session) = 0;
  /// True when a best configuration of `spec` for problem `p` on `device`
  /// (its fingerprint) is stored: the device is tuned for the job.
  virtual bool tuned_before(const KernelSpec& spec, const Problem& p, const DeviceInfo& device) = 0;
  /// One worker's calibration for a job at problem `size` (its calibrate
  /// answer, read at the protocol boundary; CalibrationRow::size unset).
  virtual void calibrated(const WorkerState& worker, const Job& job, const std::string& size,
                          const CalibrationRow& calibration) = 0;
  /// The stored best local size for a device and kernel to run a block with
  /// NDRange `block`: the best stored for exactly `block`, else the best
  /// stored for the whole problem's NDRange `whole` when it divides `block`;
  /// std::nullopt when neither.
  virtual std::optional<LocalSize> stored_local(const DeviceInfo& device, const KernelSpec& kernel, const Extent& block,
                                                const Extent& whole) = 0;
  /// The stored calibration of a device for a kernel (none when none).
  virtual std::optional<DeviceCalibration> calibration(const DeviceInfo& device, const KernelSpec& kernel) = 0;
  /// --resume: true when the sink holds what job `job` of the list `run_key`
  /// (position `index`, canonical size `size`) produces in `mode` for
  /// `worker` (calibrate: a calibration of its device for the kernel at
  /// that size; tune: a finished session of its device for the kernel and
  /// size, though tune mode asks tuned_before() instead) or, in run mode
  /// (`worker` null), a run of that job recorded ok.
  virtual bool stored(Mode mode, const std::string& run_key, std::size_t index, const Job& job, const std::string& size,
                      const WorkerState* worker) = 0;
};

/// Master settings.
struct MasterOptions {
  std::chrono::milliseconds register_timeout{60'000};  ///< wait for every hello
  std::chrono::milliseconds job_timeout{600'000};      ///< wait for one job's answers
  std::chrono::milliseconds shutdown_timeout{10'000};  ///< wait for the byes
  std::function<bool()> stop_requested;                ///< SIGINT/SIGTERM seen (may be empty)
  std::ostream* progress = nullptr;                    ///< progress lines (stderr), or none
  /// Skip what the sink already holds from an earlier run of the same job
  /// list (ResultSink::stored()): a rerun after a killed run repeats nothing.
  bool resume = false;
  /// The master's host name: a worker that reports the same host gets a
  /// result slot (result_memory.hpp) unless its job says `results:
  /// message`; "" = no worker gets one.
  std::string host;
  /// Run: build each job's timeline (JobReport::timeline, timeline.hpp) and
  /// name its critical path in the progress line and the JSON report.
  bool timeline = false;
  /// Workers that connect (ranks after the launch's, TcpHub) that
  /// registration waits for, besides every rank of the launch.
  std::size_t wait_joined = 0;
  /// Tune: when every worker of a device group is gone, how long its search
  /// waits for a worker of its fingerprint to join before it ends unfinished.
  std::chrono::milliseconds rejoin_timeout{0};
};

/// The master's loop over a Communicator (rank 0 of it).
class Master {
 public:
  /// `comm` and `sink` must outlive the master.
  Master(Communicator& comm, ResultSink& sink, MasterOptions options);
  /// Waits for a hello from every rank 1..size−1 of the launch and from
  /// MasterOptions::wait_joined workers that connect, answers each with a
  /// welcome (refusing a protocol mismatch or a worker without a device),
  /// and reports launch ranks that never registered. Returns the usable
  /// count. A worker that connects later is welcomed the same way whenever
  /// the master reads its messages (Intake), and joins the next job, or the
  /// running search of its fingerprint.
  std::size_t register_workers();
  /// Runs every job in `mode`, one after another; stops early when a stop is
  /// requested (the rest are not started). Progress line per job. With
  /// MasterOptions::resume, a job (or, in calibrate mode, a worker's part
  /// of it) that the sink holds is not run again: its report says "stored".
  /// In tune mode, with or without it, a device group with a stored best is
  /// skipped (Job::retune searches it again) and an unfinished session is
  /// continued (shared_search.hpp).
  std::vector<JobReport> run_all(Mode mode, const std::vector<Job>& jobs);
  /// Runs one job in `mode` (position `index` of the list `run_key`). A
  /// failure on the master's side (std::bad_alloc for the host buffers, a
  /// send refused, a database error) fails this job only: status "failed"
  /// with the reason, never an exception.
  JobReport run_one(Mode mode, const Job& job, const std::string& run_key = {}, std::size_t index = 0);
  /// Sends shutdown to every accepted worker (a refused one has left) and
  /// waits for their byes;
  /// returns false (naming them on the progress stream) if some did not answer.
  bool shutdown();
  /// The workers, rank order (index i = rank i+1); grows as workers connect.
  [[nodiscard]] const std::deque<WorkerState>& workers() const noexcept { return workers_; }
  /// True once a stop was requested.
  [[nodiscard]] bool stopped() const;

 private:
  /// The master's view of its communicator: before its caller sees a
  /// message, takes the first hello of a worker (during registration, and
  /// any time from a connected one) and marks a worker that left (a bye with
  /// a reason) gone. The caller still gets the bye, so the job it was in
  /// gives its work to others.
  class Intake final : public ForwardingCommunicator {
   public:
    Intake(Communicator& inner, Master& master) : ForwardingCommunicator(inner), master_(master) {}
    std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override;

   private:
    Master& master_;
  };
  /// Intake's part: true when `got` was taken (a hello answered).
  bool take_unasked(const Received& got);
  /// Answers a first hello; true when it registered its worker.
  bool take_hello(const Received& got);
  /// True when every launch rank and MasterOptions::wait_joined connected workers registered.
  bool registration_complete() const;
  /// Accepted workers that joined after registration with fingerprint `fp`,
  /// handed to the running search of that fingerprint (each once).
  std::vector<int> take_joiners(const std::string& fp);
  /// Puts the devices of workers that joined since into the sink.
  void store_joined();
  /// Marks the workers that never registered dead (their problem says so).
  void mark_unregistered();
  /// One split of a run job and what came of it (master.cpp).
  struct RunAttempt;
  /// Runs a run-mode job: splits it over the healthy workers, again without
  /// a worker that fails it, until it ends; records it in the sink.
  JobReport run_job(JobReport r);
  /// One attempt of run_job(): true when the job ended (ok, failed or
  /// interrupted), false when a worker failed and it is split again.
  bool run_attempt(JobReport& r, const KernelSpec& spec, const Problem& p, std::set<int>& excluded);
  /// The attempt's workers (usable, not excluded), with their calibrations
  /// and, for the measured model, their cost keys and learned costs.
  void choose_workers(RunAttempt& a, const Job& job);
  /// A worker's planning local size for a job (SplitWorker::local).
  LocalSize planning_local(const WorkerState& w, const Job& job, const KernelSpec& spec, const Problem& p);
  /// Plans the attempt's split into r.plan; false (the job failed, the
  /// UsageError its error) when the model refuses it or the kernel cannot
  /// run one of its blocks (a kernel file without wstune.Split: only the
  /// whole range).
  bool plan_attempt(JobReport& r, RunAttempt& a);
  /// The run_block message of each worker with a non-empty block, plan order.
  std::vector<RunBlock> block_messages(const JobReport& r, RunAttempt& a);
  /// inputs: master: `rb`'s RunBlock::sent_inputs and the buffers that carry them.
  std::vector<HostBuffer> sent_inputs(const JobReport& r, const RunAttempt& a, int rank, RunBlock& rb);
  /// The problem's inputs the master sends (inputs: master), kept while the problem and seed stay.
  const std::vector<HostBuffer>& problem_inputs(const KernelSpec& spec, const Problem& p, std::uint64_t seed);
  /// A finished part's clock for its timeline (timeline.hpp).
  PartClock part_clock(const RunAttempt& a, const WorkerPart& part) const;
  /// Builds every block's message, starts the makespan's clock and sends them.
  void send_blocks(const JobReport& r, RunAttempt& a);
  /// Receives the attempt's answers until none is pending, a stop is
  /// requested, or the job's timeout passes (the late workers dropped).
  void gather_blocks(JobReport& r, RunAttempt& a);
  /// One message received during an attempt: a result, an error, a bye.
  void take_block_answer(JobReport& r, RunAttempt& a, Received& got);
  /// Records `fault`, leaves `rank` out of the job and fails the attempt.
  void leave_out(JobReport& r, RunAttempt& a, int rank, std::string fault);
  /// Places the answers, records the parts (and learned costs), verifies.
  void finish_run(JobReport& r, const RunAttempt& a);
  /// Marks `rank`, which did not answer job `r` within the job timeout,
  /// dead (its problem says so); returns the fault's text.
  std::string mark_late(const JobReport& r, int rank);
  /// Drops `rank`, which did not answer job `r` in time, from the pool.
  void drop_late(JobReport& r, int rank);
  /// Sends `request` to every usable worker and collects their `answer`s
  /// (calibrate mode); parts stored before are skipped with --resume.
  JobReport fanout_job(JobReport r, Tag request, Tag answer);
  /// Sends `request` to the workers whose part is not stored (counted in
  /// `stored`); returns the ranks that owe an answer.
  std::set<int> send_requests(const JobReport& r, Tag request, std::size_t& stored);
  /// Receives the `pending` workers' answers until none is pending or the
  /// timeout passes; false (the job interrupted) on a stop request.
  bool gather_work(JobReport& r, Tag request, Tag answer, std::set<int>& pending);
  /// One pending worker's message for fanout_job(): its result or its error.
  void take_work_answer(JobReport& r, Tag request, Tag answer, const Received& got, std::set<int>& pending);
  // One device group's search (shared_search.hpp), on `comm` (the master's,
  // or a router channel when groups run at once); with `lock`, everything it
  // shares with the other groups (the report, the sink, progress, worker
  // states) is touched under it.
  struct GroupContext {
    Communicator& comm;
    std::mutex* lock = nullptr;
    const nlohmann::json& kernel_file;
    Router* router = nullptr;  // several groups at once: routes a joiner's rank to this group's channel
    bool energy = false;       // the workers observe each trial's energy (WorkRequest::energy)
    [[nodiscard]] std::unique_lock<std::mutex> hold() const {
      return lock ? std::unique_lock<std::mutex>(*lock) : std::unique_lock<std::mutex>();
    }
  };
  JobReport tune_job(JobReport r);
  void tune_groups(JobReport& r, const KernelSpec& spec, const Problem& p, const std::vector<std::vector<int>>& groups);
  void tune_group(JobReport& r, const KernelSpec& spec, const Problem& p, const std::vector<int>& ranks,
                  const GroupContext& ctx);
  Message prepare_message(const JobReport& r, const GroupContext& ctx) const;
  std::vector<int> prepare_group(JobReport& r, const std::vector<int>& ranks, nlohmann::json* ready,
                                 const GroupContext& ctx);
  void fault(JobReport& r, const std::string& text, const GroupContext& ctx);
  const nlohmann::json& packed(const Job& job);
  void note(const std::string& line);
  WorkerState& worker(int rank);
  const WorkerState& worker(int rank) const;
  Intake intake_;
  Communicator& comm_;   // intake_
  int launch_size_ = 1;  // ranks of the launch; connected workers come after
  bool registered_ = false;
  // Guards workers_'s growth and the joiners (a search's thread reads them
  // while the router's thread takes hellos). A deque: references stay valid.
  mutable std::mutex workers_mutex_;
  std::vector<int> joined_;        // joined after registration, not yet in a search
  std::vector<int> device_unput_;  // joined, device not yet in the sink
  ResultSink& sink_;
  MasterOptions opt_;
  std::deque<WorkerState> workers_;
  std::uint64_t next_job_ = 1;
  // CPU references of the last problems (key: kernel|size|seed), so repeated
  // jobs (warm runs, several split models) verify without recomputing.
  std::vector<std::pair<std::string, std::vector<HostBuffer>>> references_;
  const std::vector<HostBuffer>& reference(const KernelSpec& spec, const Problem& p, std::uint64_t seed);
  // Kernel files packed for the workers (key: path).
  std::map<std::string, nlohmann::json> packed_;
  // Each worker's learned costs per measured job (SplitWorker::fixed_ms and
  // scale), by fixed_cost_key() (rank, device, kernel, size, parameters,
  // direction, local policy, runs, overlap): the lower median of what its
  // last parts of this job on a block it ran before showed (observe_part(),
  // FixedCosts::observe_block(); a tried worker's first run; a one-time cost it does not report,
  // such as a driver's compile at a kernel's first launch, counts too, which
  // errs towards fewer workers), decaying while it gets no share
  // (FixedCosts::planned()), so an excluded worker is measured again; and
  // each job's latest measured plan (FixedCosts::last_plan()), kept unless a
  // new one is predicted faster by more than kReplanGain; kept while the
  // master runs.
  FixedCosts costs_;
  // Result slots of the workers on the master's host (result_memory.hpp),
  // and the ranks whose slot did not map (they send bytes from then on).
  ResultMemory result_memory_;
  std::set<int> no_slot_;
  // inputs: master: the problem's inputs (key: kernel|source|size|params|seed)
  // and, per rank, the inputs sent to it whole since they were generated.
  std::pair<std::string, std::vector<HostBuffer>> master_inputs_;
  std::map<int, std::set<std::size_t>> sent_whole_;
  std::optional<ResultSlot> result_slot(const Job& job, int rank, const KernelSpec& spec, const Problem& p,
                                        const Block& b);
  std::vector<HostBuffer> block_outputs(int rank, bool offered, BlockResult& br, std::vector<HostBuffer> buffers);
  // fixed_cost_key() of each worker of a plan, in order.
  std::vector<std::string> cost_keys(const std::vector<SplitWorker>& workers, const KernelSpec& spec, const Problem& p,
                                     const Job& job) const;
};

}  // namespace wstune::daemon
