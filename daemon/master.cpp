#include "master.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "kernel_source.hpp"
#include "router.hpp"
#include "wstune/autotune.hpp"
#include "wstune/json.hpp"
#include "wstune/store.hpp"
#include "wstune/strategies.hpp"
#include "wstune/tuning_file.hpp"

namespace wstune::daemon {

namespace {
// A worker's block outputs must match what the kernel writes for the block
// (one buffer per output, its element type and read_count elements).
void check_block_outputs(const std::vector<OutputBuffer>& want, const std::vector<HostBuffer>& got) {
  if (got.size() != want.size())
    throw ProtocolError(fmt::format("block result has {} output buffers, expected {}", got.size(), want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(got[i].type() == want[i].type) || got[i].size() != want[i].read_count) {
      throw ProtocolError(fmt::format("block output {} has {} elements of {}, expected {} of {}", i, got[i].size(),
                                      got[i].type().name(), want[i].read_count, want[i].type.name()));
    }
  }
}

// A worker's result as placeable pieces: the block and its outputs, or each
// chunk (consecutive sub-blocks tiling the block) with its own outputs, the
// buffers in chunk order. Throws ProtocolError when they do not match.
std::vector<std::pair<Block, std::vector<HostBuffer>>> result_pieces(const KernelSpec& spec, const Problem& p,
                                                                     const Block& block, const std::vector<Block>& chunks,
                                                                     std::vector<HostBuffer> got) {
  if (chunks.empty()) {
    check_block_outputs(spec.outputs(p, block), got);
    return {{block, std::move(got)}};
  }
  std::vector<std::pair<Block, std::vector<HostBuffer>>> pieces;
  std::size_t at = block.begin, next = 0;
  for (const Block& c : chunks) {
    if (c.dim != block.dim || c.begin != at || c.end <= c.begin || c.end > block.end)
      throw ProtocolError(fmt::format("block result: chunk [{}, {}) does not continue block [{}, {}) at {}", c.begin,
                                      c.end, block.begin, block.end, at));
    const auto want = spec.outputs(p, c);
    if (got.size() - next < want.size())
      throw ProtocolError(fmt::format("block result has {} output buffers, too few for its chunks", got.size()));
    std::vector<HostBuffer> outs(std::make_move_iterator(got.begin() + static_cast<std::ptrdiff_t>(next)),
                                 std::make_move_iterator(got.begin() + static_cast<std::ptrdiff_t>(next + want.size())));
    check_block_outputs(want, outs);
    pieces.emplace_back(c, std::move(outs));
    next += want.size();
    at = c.end;
  }
  if (at != block.end || next != got.size())
    throw ProtocolError(fmt::format("block result: chunks end at {} of block [{}, {}) with {} of {} buffers used", at,
                                    block.begin, block.end, next, got.size()));
  return pieces;
}
}  // namespace

using nlohmann::json;
using clock_type = std::chrono::steady_clock;

namespace {
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}
double sum(const Samples& s) {
  double t = 0;
  for (double x : s.ms) t += x;
  return t;
}
// Receive slices: short enough to notice a stop request quickly.
constexpr std::chrono::milliseconds kSlice{100};
// One receive slice, ending no later than (just after) `deadline`.
std::chrono::milliseconds slice_until(clock_type::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
  return std::clamp(left + std::chrono::milliseconds(1), std::chrono::milliseconds(1), kSlice);
}
}  // namespace

std::string WorkerState::label() const {
  return fmt::format("rank {} on {} ({})", rank, host.empty() ? "?" : host, device ? device->name : "no device");
}

json to_json(const JobReport& r) {
  json parts = json::array();
  for (const auto& p : r.parts) {
    parts.push_back(json{{"rank", p.rank}, {"host", p.host}, {"device", p.device}, {"fingerprint", p.fingerprint},
                         {"block", to_json(p.block)}, {"share", p.share}, {"local", to_string(p.local)},
                         {"local_source", p.local_source}, {"kernel_ms", p.kernel_ms},
                         {"kernel_median_ms", p.kernel_median_ms}, {"transfer_ms", p.transfer_ms}, {"return_ms", p.return_ms},
                         {"busy_ms", p.busy_ms}, {"build_ms", p.build_ms}, {"inputs_ms", p.inputs_ms},
                         {"answer_ms", p.answer_ms}, {"fixed_ms", p.fixed_ms}, {"scale", p.scale},
                         {"chunks", p.chunks}, {"overlap_wall_ms", p.overlap_wall_ms}, {"result_path", p.result_path},
                         {"trials", p.trials}});
  }
  json j{{"id", r.id}, {"mode", std::string(to_string(r.mode))}, {"job", to_json(r.job)}, {"size", r.size},
         {"status", r.status}, {"error", r.error}, {"faults", r.faults}, {"attempts", r.attempts},
         {"run_key", r.run_key}, {"index", r.index}};
  if (r.mode == Mode::run) {
    j["model"] = r.plan.model;
    j["dim"] = r.plan.dim;
    j["fractions"] = r.plan.fractions;
    j["plan_note"] = r.plan.note;
    j["parts"] = parts;
    j["makespan_ms"] = r.makespan_ms;
    j["overhead_ms"] = r.overhead_ms;
    j["verify_ms"] = r.verify_ms;
    j["verified"] = r.verdict.ok;
    j["verify"] = json{{"max_error", r.verdict.max_error}, {"tolerance", r.verdict.tolerance},
                       {"detail", r.verdict.detail}};
  } else {
    j["workers"] = r.data;
  }
  return j;
}

void MemorySink::tuned(const WorkerState& w, const Job& j, const std::string& size, const json& r) {
  tune_results.push_back(json{{"rank", w.rank}, {"fingerprint", w.device ? w.device->fingerprint() : ""},
                              {"kernel", j.kernel}, {"size", size}, {"result", r}});
}
void MemorySink::calibrated(const WorkerState& w, const Job& j, const std::string& size, const json& c) {
  calibrations.push_back(json{{"rank", w.rank}, {"fingerprint", w.device ? w.device->fingerprint() : ""},
                              {"kernel", j.kernel}, {"size", size}, {"calibration", c}});
}
std::optional<LocalSize> MemorySink::stored_local(const DeviceInfo&, const KernelSpec&, const Extent&,
                                                  const Extent&) {
  return std::nullopt;
}

namespace {
// A session kept in memory (--no-store, tests): trials go to the sink's list.
class MemoryLog final : public TrialLog {
 public:
  MemoryLog(json& list, json base) : list_(list), base_(std::move(base)) {}
  // Nothing from before the session (a session in memory is never
  // resumed). What this session recorded is not "stored": tune() would take
  // a trial a worker measured ahead as a stored one, count no evaluation
  // for it and never collect it from the evaluator (the budget overrun and
  // the stalled look-ahead of --no-store before 2026-11-24).
  std::optional<Trial> stored(const Configuration&) override { return std::nullopt; }
  bool record(const Trial& t) override {
    if (!mine_.insert(t.configuration().key()).second) return false;
    json e = base_;
    e["trial"] = trial_to_json(t);
    list_.push_back(std::move(e));
    return true;
  }
  json finish(const TuneResult&) override { return json{{"session", nullptr}, {"resumed_trials", 0}}; }

 private:
  json& list_;
  json base_;
  std::set<std::string> mine_;  // configurations recorded (one row each)
};
}  // namespace

std::unique_ptr<TrialLog> MemorySink::open_trial_log(const KernelSpec& spec, const TuneTarget& target,
                                                     const SessionSpec&) {
  return std::make_unique<MemoryLog>(
      trials, json{{"fingerprint", target.device_fingerprint}, {"kernel", spec.name()}, {"size", target.size}});
}

bool MemorySink::tuned_before(const KernelSpec& spec, const Problem& p, const DeviceInfo& device) {
  return std::any_of(tune_results.begin(), tune_results.end(), [&](const json& e) {
    return e["fingerprint"] == device.fingerprint() && e["kernel"] == spec.name() && e["size"] == p.text;
  });
}
bool MemorySink::stored(Mode mode, const std::string& key, std::size_t index, const Job& job, const std::string& size,
                        const WorkerState* w) {
  if (mode == Mode::run) {
    return std::any_of(runs.begin(), runs.end(), [&](const JobReport& r) {
      return r.run_key == key && r.index == index && r.status == "ok";
    });
  }
  const json& list = mode == Mode::tune ? tune_results : calibrations;
  const std::string fp = w && w->device ? w->device->fingerprint() : "";
  return std::any_of(list.begin(), list.end(), [&](const json& e) {
    return e["fingerprint"] == fp && e["kernel"] == job.kernel && e["size"] == size;
  });
}

json MemorySink::calibration(const DeviceInfo& d, const KernelSpec& kernel) {
  json found = nullptr;
  for (const auto& c : calibrations)
    if (c["fingerprint"] == d.fingerprint() && c["kernel"] == kernel.name()) found = c["calibration"];
  return found;
}

Master::Master(Communicator& comm, ResultSink& sink, MasterOptions options)
    : comm_(comm), sink_(sink), opt_(std::move(options)) {
  for (int r = 1; r < comm_.size(); ++r) {
    WorkerState w;
    w.rank = r;
    workers_.push_back(w);
  }
}

bool Master::stopped() const { return opt_.stop_requested && opt_.stop_requested(); }

void Master::note(const std::string& line) {
  if (opt_.progress) *opt_.progress << "wstuned: " << line << std::endl;
}

namespace {
// The answer to worker `w`'s hello, whose host, selector and device it
// records: a refusal for a malformed hello, a protocol mismatch or no device.
Welcome welcome_for(WorkerState& w, const Message& hello) {
  Welcome answer;
  try {
    const Hello h = Hello::from(hello);
    w.host = h.host;
    w.selector = h.selector;
    w.device = h.device;
    if (h.protocol != kProtocolVersion) {
      answer = {false, fmt::format("protocol version mismatch: worker speaks {}, master speaks {}; run the same "
                                   "wstuned build on every node", h.protocol, kProtocolVersion)};
    } else if (!h.device) {
      answer = {false, h.error.rfind("usage error", 0) == 0
                           ? h.error
                           : fmt::format("no OpenCL device: {}", h.error.empty() ? "none found" : h.error)};
    }
  } catch (const ProtocolError& e) {
    answer = {false, fmt::format("malformed registration: {}", e.what())};
  }
  return answer;
}
}  // namespace

std::size_t Master::register_workers() {
  const auto deadline = clock_type::now() + opt_.register_timeout;
  std::size_t waiting = workers_.size();
  while (waiting > 0 && clock_type::now() < deadline && !stopped()) {
    auto got = comm_.recv(kAnySource, slice_until(deadline));
    if (!got) continue;
    if (got->source < 1 || got->source >= comm_.size()) continue;
    if (take_hello(*got)) --waiting;
  }
  mark_unregistered();
  sink_.workers(workers_);
  return static_cast<std::size_t>(std::count_if(workers_.begin(), workers_.end(),
                                                [](const WorkerState& w) { return w.usable(); }));
}

// A worker's first hello is answered with a welcome (or a refusal) and
// noted: true; anything else from it during registration is not.
bool Master::take_hello(const Received& got) {
  WorkerState& w = worker(got.source);
  if (got.message.tag != Tag::hello) {
    note(fmt::format("ignoring a {} message from rank {} during registration", to_string(got.message.tag),
                     got.source));
    return false;
  }
  if (w.registered) return false;
  w.registered = true;
  const Welcome answer = welcome_for(w, got.message);
  w.accepted = answer.accepted;
  w.problem = answer.reason;
  comm_.send(w.rank, answer.to_message());
  if (w.accepted) {
    note(fmt::format("worker {} registered: {} CU x {} PE, fingerprint {}", w.label(), w.device->compute_units,
                     w.device->pe_per_cu, w.device->fingerprint()));
  } else {
    note(fmt::format("worker rank {} on {} refused: {}", w.rank, w.host.empty() ? "?" : w.host, w.problem));
  }
  return true;
}

// Marks the workers that never said hello dead, each noted.
void Master::mark_unregistered() {
  for (auto& w : workers_) {
    if (!w.registered) {
      w.alive = false;
      w.problem = fmt::format("did not register within {} s", opt_.register_timeout.count() / 1000.0);
      note(fmt::format("worker rank {} {}", w.rank, w.problem));
    }
  }
}

std::string run_key(Mode mode, const std::vector<Job>& jobs) {
  json list = json::array();
  for (const Job& j : jobs) list.push_back(to_json(j));
  return fnv1a_hex(fmt::format("{}\n{}", to_string(mode), list.dump()));
}

std::vector<JobReport> Master::run_all(Mode mode, const std::vector<Job>& jobs) {
  std::vector<JobReport> reports;
  const std::string key = run_key(mode, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (stopped()) {
      note(fmt::format("stop requested: {} job(s) not started", jobs.size() - i));
      break;
    }
    JobReport r = run_one(mode, jobs[i], key, i);
    std::string line = fmt::format("[{}/{}] {} {} {}: {}", i + 1, jobs.size(), to_string(mode), r.job.kernel,
                                   r.size, r.status);
    if (r.status == "stored") {
      line += " by an earlier run of this job list (--resume): not run again";
    } else if (mode == Mode::run && r.ok()) {
      std::vector<std::string> shares;
      for (const auto& p : r.parts) shares.push_back(fmt::format("r{} {:.0f}%", p.rank, 100 * p.share));
      line += fmt::format(", makespan {:.2f} ms, overhead {:.2f} ms, split {} ({}), verified", r.makespan_ms,
                          r.overhead_ms, r.plan.model, fmt::join(shares, " "));
      if (!r.plan.note.empty()) line += " (" + r.plan.note + ")";
    } else if (r.ok()) {
      line += fmt::format(", {} worker(s)", r.data.size());
    }
    if (!r.error.empty()) line += " - " + r.error;
    if (!r.faults.empty()) line += fmt::format(" [{} fault(s)]", r.faults.size());
    note(line);
    reports.push_back(std::move(r));
  }
  return reports;
}

JobReport Master::run_one(Mode mode, const Job& job, const std::string& run_key, std::size_t index) {
  JobReport r;
  r.id = next_job_++;
  r.mode = mode;
  r.job = job;
  r.run_key = run_key;
  r.index = index;
  try {
    const auto spec = master_kernel(job.kernel, job.kernel_file);
    r.size = (job.size.empty() ? spec->paper_size() : spec->parse_size(job.size)).text;
  } catch (const UsageError& e) {
    r.status = "failed";
    r.error = e.what();
    return r;
  }
  if (opt_.resume && mode == Mode::run && sink_.stored(mode, run_key, index, job, r.size, nullptr)) {
    r.status = "stored";
    return r;
  }
  // A job that fails on the master's side (host memory for a size the parser
  // accepts, a message over MPI's count limit, a database that refuses)
  // fails alone: the master reports it and goes on (issue 17: an uncaught
  // std::bad_alloc ended the whole run).
  const JobReport start = r;
  try {
    switch (mode) {
      case Mode::run: return run_job(std::move(r));
      case Mode::tune: return tune_job(std::move(r));
      case Mode::calibrate: return fanout_job(std::move(r), Tag::calibrate, Tag::calibrate_result);
    }
  } catch (const std::bad_alloc&) {
    r = start;
    r.status = "failed";
    r.error = fmt::format("out of memory: the master could not allocate the host buffers of {} {} "
                          "(std::bad_alloc); use a smaller size or more memory", r.job.kernel, r.size);
  } catch (const std::exception& e) {
    r = start;
    r.status = "failed";
    r.error = fmt::format("the master failed on this job: {}", e.what());
  }
  return r;
}

namespace {

// The key of a worker's fixed cost per job: its rank and device (two
// workers of one device model have their own costs), the kernel (and
// source), size, parameters, split direction, local size policy and the
// kernel runs per job.
std::string fixed_cost_key(const WorkerState& w, const KernelSpec& spec, const Problem& p, const Job& job) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", w.rank, w.device->fingerprint(), spec.name(),
                     fnv1a_hex(spec.source()), p.text, p.params.dump(), job.direction, to_string(job.local),
                     job.warmup + job.repetitions, job.overlap);
}

}  // namespace

std::vector<std::string> Master::cost_keys(const std::vector<SplitWorker>& workers, const KernelSpec& spec,
                                           const Problem& p, const Job& job) const {
  std::vector<std::string> keys;
  for (const auto& w : workers) keys.push_back(fixed_cost_key(worker(w.rank), spec, p, job));
  return keys;
}

namespace {
// True when every output of a result came through the master's result slot.
bool got_all_shared(const BlockResult& br,
                    const std::vector<std::pair<Block, std::vector<HostBuffer>>>& pieces) {
  std::size_t outputs = 0;
  for (const auto& piece : pieces) outputs += piece.second.size();
  return br.shared.size() == outputs;
}
}  // namespace

// A result slot for a worker on the master's host (result_memory.hpp), large
// enough for its block's outputs with room for chunks whose outputs add up
// to more (what does not fit still travels as bytes); none for a job with
// `results: message`, a worker elsewhere, or one whose slot did not map.
std::optional<ResultSlot> Master::result_slot(const Job& job, int rank, const KernelSpec& spec, const Problem& p,
                                              const Block& b) {
  if (job.results != "auto" || opt_.host.empty() || worker(rank).host != opt_.host || no_slot_.count(rank))
    return std::nullopt;
  std::size_t bytes = 0;
  for (const auto& o : spec.outputs(p, b)) bytes += o.read_count * o.type.bytes();
  return result_memory_.slot(rank, bytes + bytes / 8 + (std::size_t{1} << 20));
}

// A result's outputs in order: views of those left in the rank's slot at
// their positions, the message's buffers in between. A worker whose slot
// did not map is offered none again. Throws ProtocolError for outputs in a
// slot this run_block did not offer (`offered` false: the file may hold an
// earlier job's bytes) and for positions that repeat.
std::vector<HostBuffer> Master::block_outputs(int rank, bool offered, BlockResult& br,
                                              std::vector<HostBuffer> buffers) {
  if (!br.shared_error.empty() && no_slot_.insert(rank).second)
    note(fmt::format("worker {} could not use its result slot ({}); its results travel as bytes",
                     worker(rank).label(), br.shared_error));
  if (br.shared.empty()) return buffers;
  if (!offered)
    throw ProtocolError(fmt::format("block result lists {} output(s) in a result slot, but this job offered none",
                                    br.shared.size()));
  std::vector<HostBuffer> outputs(br.shared.size() + buffers.size());
  std::vector<bool> filled(outputs.size(), false);
  for (const SharedOutput& s : br.shared) {
    if (s.index >= outputs.size() || filled[s.index])
      throw ProtocolError(fmt::format("block result: shared output {} repeats or lies beyond its {} outputs", s.index,
                                      outputs.size()));
    outputs[s.index] = result_memory_.view(rank, s);
    filled[s.index] = true;
  }
  for (std::size_t i = 0, next = 0; i < outputs.size(); ++i)
    if (!filled[i]) outputs[i] = std::move(buffers[next++]);
  return outputs;
}

namespace {
// One worker's answer to its block in a run attempt.
struct BlockAnswer {
  BlockResult result;
  // The block's outputs, or each chunk's.
  std::vector<std::pair<Block, std::vector<HostBuffer>>> pieces;
  double return_ms = 0;  // the master's receive of the result message
  double answer_ms = 0;  // from the attempt's first send to the result's arrival
};

// The part of a run job that worker `w` ran as `planned` (its plan entry), from its answer.
WorkerPart run_part(const WorkerState& w, const SplitWorker& planned, const BlockAnswer& answer, const KernelSpec& spec,
                    const Problem& p, unsigned dim) {
  const BlockResult& br = answer.result;
  WorkerPart part;
  part.rank = planned.rank;
  part.host = w.host;
  part.device = w.device->name;
  part.fingerprint = w.device->fingerprint();
  part.block = br.block;
  part.share = static_cast<double>(br.block.size()) / static_cast<double>(spec.split_units(p, dim));
  part.local = br.local;
  part.local_source = br.local_source;
  part.kernel_ms = sum(br.kernel);
  part.kernel_median_ms = br.kernel.median();
  part.return_ms = answer.return_ms;
  // Transfers as the host sees them: the wall clock of upload and
  // read-back (pageable memory is staged by the host before the device's
  // copy that the events time), never less than the events.
  part.transfer_ms =
      br.recv_ms + std::max(sum(br.h2d), br.h2d_wall_ms) + std::max(sum(br.d2h), br.d2h_wall_ms) + part.return_ms;
  part.busy_ms = br.busy_ms;
  part.build_ms = br.build_ms;
  part.inputs_ms = br.inputs_ms;
  part.answer_ms = answer.answer_ms;
  part.fixed_ms = planned.fixed_ms;
  part.scale = planned.scale;
  part.result_path = br.shared.empty() ? "message" : got_all_shared(br, answer.pieces) ? "slot" : "mixed";
  part.chunks = std::max<std::size_t>(1, br.chunks.size());
  part.overlap_wall_ms = br.overlap_wall_ms;
  part.recv_ms = br.recv_ms;
  part.trials = br.trials;
  return part;
}
}  // namespace

// One split of a run job and what came of it: its workers (the plan's
// order), the blocks still out, the answers so far.
struct Master::RunAttempt {
  RunAttempt(const KernelSpec& s, const Problem& pr, const Job& job, std::set<int>& ex)
      : spec(s), p(pr), excluded(ex), runs(job.warmup + job.repetitions), measured(job.split == "measured") {}
  const KernelSpec& spec;
  const Problem& p;
  std::set<int>& excluded;             // workers that failed this job (kept over its attempts)
  unsigned runs;                       // kernel runs per block: warm-up and timed
  bool measured;                       // the `measured` split model
  std::vector<SplitWorker> healthy;    // the usable workers not excluded, rank order
  std::vector<std::string> keys;       // their fixed_cost_key()s (measured only)
  std::set<int> slotted;               // ranks offered a result slot in this attempt
  std::map<int, Block> pending;        // blocks sent and not answered, by rank
  std::map<int, BlockAnswer> results;  // answers, by rank
  clock_type::time_point t0{};         // the first send
  bool failed = false;                 // a worker failed or left: split again
};

JobReport Master::run_job(JobReport r) {
  const auto spec_ptr = master_kernel(r.job.kernel, r.job.kernel_file);
  const KernelSpec& spec = *spec_ptr;
  const Problem p = job_problem(spec, r.size, r.job.config);
  std::set<int> excluded;  // workers that failed this job
  while (!run_attempt(r, spec, p, excluded))
    note(fmt::format("job {} ({} {}): re-splitting over the healthy workers", r.id, r.job.kernel, r.size));
  sink_.run(r);
  return r;
}

// One attempt of a run job: true when the job ended (ok, failed or
// interrupted), false when a worker failed and it is split again.
bool Master::run_attempt(JobReport& r, const KernelSpec& spec, const Problem& p, std::set<int>& excluded) {
  if (stopped()) {
    r.status = "interrupted";
    r.error = "stop requested";
    return true;
  }
  RunAttempt a(spec, p, r.job, excluded);
  choose_workers(a, r.job);
  if (a.healthy.empty()) {
    r.status = "failed";
    r.error = "no healthy worker left for this job";
    if (!r.faults.empty()) r.error += " (the last fault: " + r.faults.back() + ")";
    return true;
  }
  ++r.attempts;
  if (!plan_attempt(r, a)) return true;
  // Workers generate their inputs from the seed (no input crosses MPI);
  // the makespan runs from the first send to the last result.
  send_blocks(r, a);
  gather_blocks(r, a);
  r.makespan_ms = ms_since(a.t0);
  if (stopped() && !a.pending.empty()) {
    r.status = "interrupted";
    r.error = "stop requested while workers were running";
    return true;
  }
  if (a.failed) return false;
  finish_run(r, a);
  return true;
}

// The attempt's workers: the usable ones not excluded, with their
// calibrations and (measured) their cost keys and learned costs.
void Master::choose_workers(RunAttempt& a, const Job& job) {
  for (const auto& w : workers_) {
    if (!w.usable() || a.excluded.count(w.rank)) continue;
    a.healthy.push_back(
        SplitWorker{w.rank, *w.device, a.measured ? sink_.calibration(*w.device, a.spec) : json(nullptr)});
  }
  if (!a.measured) return;
  a.keys = cost_keys(a.healthy, a.spec, a.p, job);
  costs_.assume(a.healthy, a.keys);
}

// Plans the attempt's split into r.plan; false (the job failed) when the model refuses it.
bool Master::plan_attempt(JobReport& r, RunAttempt& a) {
  try {
    const std::vector<Block>* previous = a.measured ? costs_.last_plan(a.keys) : nullptr;
    r.plan = plan_split(r.job.split, r.job.direction, a.spec, a.p, a.healthy, a.runs, previous,
                        a.measured ? costs_.plans_made(a.keys) : 0);
    // Remembered; a left-out worker's cost decays.
    if (a.measured) costs_.planned(a.healthy, a.keys, r.plan.blocks, r.plan.held_by_move);
  } catch (const UsageError& e) {
    r.status = "failed";
    r.error = e.what();
    return false;
  }
  return true;
}

// The run_block message of each worker with a non-empty block, plan order
// (policy stored: its stored local size, else the paper's rule); records
// the ranks offered a result slot.
std::vector<RunBlock> Master::block_messages(const JobReport& r, RunAttempt& a) {
  std::vector<RunBlock> messages;
  for (std::size_t i = 0; i < a.healthy.size(); ++i) {
    const Block& b = r.plan.blocks[i];
    if (b.size() == 0) continue;
    RunBlock rb{r.id, r.attempts, r.job.kernel, r.size, b, r.job.local, std::nullopt, r.job.warmup,
                r.job.repetitions, r.job.seed, a.p.params, packed(r.job), r.job.overlap,
                result_slot(r.job, a.healthy[i].rank, a.spec, a.p, b)};
    if (r.job.local == LocalPolicy::stored) {
      if (auto l = sink_.stored_local(*worker(a.healthy[i].rank).device, a.spec, a.spec.block_global(a.p, b),
                                      a.spec.global_size(a.p)))
        rb.local = *l;
      else
        rb.policy = LocalPolicy::rule;  // nothing stored: the paper's rule
    }
    if (rb.result_slot) a.slotted.insert(a.healthy[i].rank);
    messages.push_back(std::move(rb));
  }
  return messages;
}

// Builds every block's message, then starts the makespan's clock (a.t0)
// and sends them; each sent block is pending.
void Master::send_blocks(const JobReport& r, RunAttempt& a) {
  const std::vector<RunBlock> messages = block_messages(r, a);
  a.t0 = clock_type::now();
  for (std::size_t i = 0, k = 0; i < a.healthy.size(); ++i) {
    if (r.plan.blocks[i].size() == 0) continue;
    a.pending[a.healthy[i].rank] = messages[k].block;
    comm_.send(a.healthy[i].rank, messages[k].to_message());
    ++k;
  }
}

// Receives answers until no block is pending, a stop is requested, or the
// job's timeout passes (the workers still out are then dropped for good).
void Master::gather_blocks(JobReport& r, RunAttempt& a) {
  const auto deadline = a.t0 + opt_.job_timeout;
  while (!a.pending.empty()) {
    if (stopped()) break;
    const auto now = clock_type::now();
    if (now >= deadline) {
      for (const auto& [rank, b] : a.pending) drop_late(r, rank);
      a.pending.clear();
      a.failed = true;
      break;
    }
    auto got = comm_.recv(kAnySource, slice_until(deadline));
    if (!got) continue;
    if (got->source < 1 || got->source >= comm_.size()) continue;
    take_block_answer(r, a, *got);
  }
}

// One message during a run attempt: a block's result, a worker's error or
// bye (stale ones dropped, other tags noted and ignored); a bad one leaves
// its worker out of the job.
void Master::take_block_answer(JobReport& r, RunAttempt& a, Received& got) {
  const int src = got.source;
  try {
    if (got.message.tag == Tag::block_result) {
      BlockResult br = BlockResult::from(got.message);
      if (br.job != r.id || br.attempt != r.attempts || !a.pending.count(src)) return;  // stale
      auto pieces = result_pieces(a.spec, a.p, a.pending[src], br.chunks,
                                  block_outputs(src, a.slotted.count(src) > 0, br, std::move(got.message.buffers)));
      a.results[src] = {std::move(br), std::move(pieces), got.recv_ms, ms_since(a.t0)};
      a.pending.erase(src);
    } else if (got.message.tag == Tag::worker_error) {
      const WorkerError e = WorkerError::from(got.message);
      if (e.job != r.id || e.attempt != r.attempts || !a.pending.count(src)) return;
      leave_out(r, a, src, fmt::format("worker {} failed job {} ({}): {}", worker(src).label(), r.id,
                                       wstune::to_string(e.status), e.text));
    } else if (got.message.tag == Tag::bye) {
      WorkerState& w = worker(src);
      w.alive = false;
      w.problem = "left (sent bye) during a job";
      r.faults.push_back(fmt::format("worker {} {}", w.label(), w.problem));
      a.pending.erase(src);
      a.failed = true;
    } else {
      note(fmt::format("ignoring an unexpected {} from rank {}", to_string(got.message.tag), src));
    }
  } catch (const ProtocolError& e) {
    leave_out(r, a, src, fmt::format("worker {} sent a bad answer: {}", worker(src).label(), e.what()));
  }
}

// A worker that failed the attempt (`fault` says how): recorded and noted,
// left out of the rest of the job; the attempt fails.
void Master::leave_out(JobReport& r, RunAttempt& a, int rank, std::string fault) {
  r.faults.push_back(std::move(fault));
  note(r.faults.back());
  a.excluded.insert(rank);
  a.pending.erase(rank);
  a.failed = true;
}

// Places every answer's outputs, records each worker's part (measured:
// what it cost beyond the model, for the next plan), finishes, verifies.
void Master::finish_run(JobReport& r, const RunAttempt& a) {
  std::vector<HostBuffer> full = a.spec.empty_outputs(a.p);
  std::vector<Block> placed;
  r.parts.clear();
  double slowest = 0;
  for (std::size_t i = 0; i < a.healthy.size(); ++i) {
    auto it = a.results.find(a.healthy[i].rank);
    if (it == a.results.end()) continue;
    const BlockResult& br = it->second.result;
    for (const auto& [piece, outputs] : it->second.pieces) {  // each chunk's outputs are a block's
      a.spec.place_block(a.p, piece, outputs, full);
      placed.push_back(piece);
    }
    WorkerPart part = run_part(worker(a.healthy[i].rank), a.healthy[i], it->second, a.spec, a.p, r.plan.dim);
    if (a.measured) {  // what this worker's part cost beyond the model, for the next plan of this job
      const double own = own_answer_ms(part.answer_ms, part.busy_ms, part.return_ms, part.build_ms + part.inputs_ms);
      // Learned from repeats of a block (and a tried worker's first run).
      if (const auto c =
              observe_part(a.spec, a.p, a.healthy[i], r.plan.dim, br.block, a.runs, own, part.overlap_wall_ms))
        costs_.observe_block(a.keys[i], br.block, *c);
    }
    slowest = std::max(slowest, part.device_ms());
    r.parts.push_back(std::move(part));
  }
  r.overhead_ms = r.makespan_ms - slowest;
  const auto v0 = clock_type::now();
  a.spec.finish(a.p, placed, full);
  r.verdict = a.spec.verify(a.p, full, reference(a.spec, a.p, r.job.seed));
  r.verify_ms = ms_since(v0);
  if (!r.verdict.ok) {
    r.status = "failed";
    r.error = verification_error(r.verdict);
  }
}

// Marks `rank`, which did not answer job `r` within the job timeout, dead;
// returns the fault's text.
std::string Master::mark_late(const JobReport& r, int rank) {
  WorkerState& w = worker(rank);
  w.alive = false;
  w.problem = fmt::format("did not answer job {} within {} s", r.id, opt_.job_timeout.count() / 1000.0);
  return fmt::format("worker {} {}; dropped from the pool", w.label(), w.problem);
}

// Drops `rank`, which did not answer job `r` in time, from the pool.
void Master::drop_late(JobReport& r, int rank) {
  r.faults.push_back(mark_late(r, rank));
  note(r.faults.back());
}

const std::vector<HostBuffer>& Master::reference(const KernelSpec& spec, const Problem& p, std::uint64_t seed) {
  const std::string key = fmt::format("{}|{}|{}|{}|{}", spec.name(), fnv1a_hex(spec.source()), p.text,
                                      p.params.dump(), seed);
  for (const auto& [k, ref] : references_)
    if (k == key) return ref;
  if (references_.size() >= 2) references_.erase(references_.begin());
  references_.emplace_back(key, spec.reference(p, spec.generate_inputs(p, seed)));
  return references_.back().second;
}

const json& Master::packed(const Job& job) {
  static const json none;
  if (job.kernel_file.empty()) return none;
  auto& p = packed_[job.kernel_file];
  if (p.is_null()) p = pack_tuning_file(job.kernel_file);
  return p;
}

JobReport Master::fanout_job(JobReport r, Tag request, Tag answer) {
  r.attempts = 1;
  std::size_t stored = 0;
  std::set<int> pending = send_requests(r, request, stored);
  if (pending.empty()) {
    r.status = stored ? "stored" : "failed";
    r.error = stored ? "" : "no healthy worker";
    return r;
  }
  if (!gather_work(r, request, answer, pending)) return r;  // interrupted
  if (r.data.empty()) {
    r.status = "failed";
    if (r.error.empty()) r.error = "no worker finished this job";
  }
  return r;
}

// Sends `request` to every usable worker whose part is not stored already
// (--resume; those are counted in `stored`): the ranks that owe an answer.
std::set<int> Master::send_requests(const JobReport& r, Tag request, std::size_t& stored) {
  std::set<int> pending;
  for (const auto& w : workers_) {
    if (!w.usable()) continue;
    if (opt_.resume && sink_.stored(r.mode, r.run_key, r.index, r.job, r.size, &w)) {
      ++stored;  // an earlier run stored this worker's part
      continue;
    }
    WorkRequest req{r.id,        r.job.kernel,   r.size,       r.job.repetitions, r.job.max_trials,
                    r.job.calibrate_budget_ms, r.job.seed, r.job.config, packed(r.job)};
    comm_.send(w.rank, req.to_message(request));
    pending.insert(w.rank);
  }
  return pending;
}

// Receives the `pending` workers' answers until none is pending or the
// job's timeout passes (the late ones dropped for good); false, the job
// interrupted, when a stop is requested.
bool Master::gather_work(JobReport& r, Tag request, Tag answer, std::set<int>& pending) {
  const auto deadline = clock_type::now() + opt_.job_timeout;
  while (!pending.empty()) {
    if (stopped()) {
      r.status = "interrupted";
      r.error = "stop requested";
      return false;
    }
    const auto now = clock_type::now();
    if (now >= deadline) {
      for (int rank : pending) drop_late(r, rank);
      break;
    }
    auto got = comm_.recv(kAnySource, slice_until(deadline));
    if (!got || !pending.count(got->source)) continue;
    take_work_answer(r, request, answer, *got, pending);
  }
  return true;
}

// One pending worker's message for a fanned-out job: its result (to the
// sink and the report) or its error; other tags and other jobs' answers
// are ignored.
void Master::take_work_answer(JobReport& r, Tag request, Tag answer, const Received& got, std::set<int>& pending) {
  WorkerState& w = worker(got.source);
  try {
    if (got.message.tag == answer) {
      const WorkResult res = WorkResult::from(got.message);
      if (res.job != r.id) return;
      if (request == Tag::tune) sink_.tuned(w, r.job, r.size, res.data);
      else sink_.calibrated(w, r.job, r.size, res.data);
      r.data.push_back(json{{"rank", w.rank}, {"host", w.host}, {"device", w.device->name},
                            {"fingerprint", w.device->fingerprint()}, {"result", res.data}});
      pending.erase(got.source);
    } else if (got.message.tag == Tag::worker_error) {
      const WorkerError e = WorkerError::from(got.message);
      if (e.job != r.id) return;
      r.faults.push_back(fmt::format("worker {} failed job {} ({}): {}", w.label(), r.id,
                                     wstune::to_string(e.status), e.text));
      note(r.faults.back());
      pending.erase(got.source);
    }
  } catch (const ProtocolError& e) {
    r.faults.push_back(fmt::format("worker {} sent a bad answer: {}", w.label(), e.what()));
    pending.erase(got.source);
  }
}

namespace {

// The strategy of a job's search: the job's, else the tuning file's Search,
// else exhaustive (guided under a max_trials budget), as before issue 14.
std::string tune_strategy(const Job& job, const KernelSpec& spec) {
  if (!job.strategy.empty()) return job.strategy;
  if (const TuningFile* f = tuning_file_of(spec); f && !f->strategy.empty()) return f->strategy;
  return job.max_trials ? "guided" : "exhaustive";
}

json trial_summary(const Trial& t) {
  return json{{"params", t.params}, {"local", to_string(t.local)}, {"status", std::string(to_string(t.status))},
              {"error", t.error}, {"median_ms", t.ok() ? json(t.median_ms()) : json(nullptr)},
              {"samples_ms", t.kernel.ms}, {"verified", t.verified}, {"from_store", t.from_store}};
}

}  // namespace

JobReport Master::tune_job(JobReport r) {
  const auto spec_ptr = master_kernel(r.job.kernel, r.job.kernel_file);
  const Problem p = spec_ptr->parse_size(r.size);
  // One search per device fingerprint, shared by the workers that have it.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& w : workers_) {
    if (!w.usable()) continue;
    const std::string fp = w.device->fingerprint();
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == fp; });
    if (g == groups.end()) groups.push_back({fp, {w.rank}});
    else g->second.push_back(w.rank);
  }
  r.attempts = 1;
  std::vector<std::vector<int>> todo;
  for (const auto& [fp, ranks] : groups) {
    if (!r.job.retune && sink_.tuned_before(*spec_ptr, p, *worker(ranks.front()).device)) {
      // Tuned before: the store has its best ("retune": true searches again).
      note(fmt::format("job {}: {} is tuned for {} {} (a best is stored): skipped; \"retune\": true searches again",
                       r.id, worker(ranks.front()).device->name, r.job.kernel, r.size));
      continue;
    }
    todo.push_back(ranks);
  }
  if (!todo.empty()) tune_groups(r, *spec_ptr, p, todo);
  std::sort(r.data.begin(), r.data.end(), [](const json& a, const json& b) { return a["rank"] < b["rank"]; });
  if (stopped()) {
    r.status = "interrupted";
    r.error = "stop requested";
  } else if (r.data.empty()) {
    r.status = !groups.empty() && todo.empty() ? "stored" : "failed";
    if (r.status == "failed") r.error = groups.empty() ? "no healthy worker" : "no worker finished this job";
  }
  return r;
}

void Master::fault(JobReport& r, const std::string& text, const GroupContext& ctx) {
  const auto held = ctx.hold();
  r.faults.push_back(text);
  note(text);
}

// One group: on the master's communicator. Several: each in its own thread
// on a router channel, the router pumped here (the only thread that calls
// the communicator) until every search has ended.
void Master::tune_groups(JobReport& r, const KernelSpec& spec, const Problem& p,
                         const std::vector<std::vector<int>>& groups) {
  const json& kernel_file = packed(r.job);
  auto one = [&](const std::vector<int>& ranks, const GroupContext& ctx) {
    try {
      tune_group(r, spec, p, ranks, ctx);
    } catch (const std::exception& e) {  // SearchAborted, a space the master cannot build, ...
      fault(r, fmt::format("the search on {} stopped: {}", worker(ranks.front()).label(), e.what()), ctx);
    }
  };
  if (groups.size() == 1) return one(groups.front(), GroupContext{comm_, nullptr, kernel_file});
  Router router(comm_);
  std::mutex lock;
  std::atomic<std::size_t> running{groups.size()};
  std::vector<std::thread> threads;
  for (const auto& ranks : groups) {
    Channel& channel = router.channel(ranks);
    threads.emplace_back([&, ranks, ctx = GroupContext{channel, &lock, kernel_file}] {
      one(ranks, ctx);
      --running;
    });
  }
  while (running > 0) router.pump(std::chrono::milliseconds(1));
  for (auto& t : threads) t.join();
}

// Sends Tag::tune to `ranks` and waits for each one's answer: the ranks
// that are ready (their answers in `ready`, by rank), faults for the others.
std::vector<int> Master::prepare_group(JobReport& r, const std::vector<int>& ranks, json* ready,
                                       const GroupContext& ctx) {
  WorkRequest req{r.id, r.job.kernel, r.size, r.job.repetitions, r.job.max_trials, 0, r.job.seed, json::object(),
                  ctx.kernel_file};
  std::set<int> pending;
  for (int rank : ranks) {
    ctx.comm.send(rank, req.to_message(Tag::tune));
    pending.insert(rank);
  }
  std::vector<int> ok;
  const auto deadline = clock_type::now() + opt_.job_timeout;
  while (!pending.empty() && !stopped()) {
    if (clock_type::now() >= deadline) {
      for (int rank : pending) fault(r, mark_late(r, rank), ctx);
      break;
    }
    auto got = ctx.comm.recv(kAnySource, slice_until(deadline));
    if (!got || !pending.count(got->source)) continue;
    try {
      if (got->message.tag == Tag::tune_result) {
        const WorkResult res = WorkResult::from(got->message);
        if (res.job != r.id) continue;
        (*ready)[std::to_string(got->source)] = res.data;
        ok.push_back(got->source);
      } else if (got->message.tag == Tag::worker_error) {
        const WorkerError e = WorkerError::from(got->message);
        if (e.job != r.id) continue;
        fault(r, fmt::format("worker {} failed job {} ({}): {}", worker(got->source).label(), r.id,
                             wstune::to_string(e.status), e.text), ctx);
      } else {
        continue;
      }
    } catch (const ProtocolError& e) {
      fault(r, fmt::format("worker {} sent a bad answer: {}", worker(got->source).label(), e.what()), ctx);
    }
    pending.erase(got->source);
  }
  std::sort(ok.begin(), ok.end());
  return ok;
}

namespace {
// A group's TrialLog used under the lock the groups share.
class LockedLog final : public TrialLog {
 public:
  LockedLog(std::unique_ptr<TrialLog> log, std::mutex* lock) : log_(std::move(log)), lock_(lock) {}
  std::optional<Trial> stored(const Configuration& c) override {
    const auto held = hold();
    return log_->stored(c);
  }
  bool record(const Trial& t) override {
    const auto held = hold();
    return log_->record(t);
  }
  json finish(const TuneResult& result) override {
    const auto held = hold();
    return log_->finish(result);
  }

 private:
  std::unique_lock<std::mutex> hold() const {
    return lock_ ? std::unique_lock<std::mutex>(*lock_) : std::unique_lock<std::mutex>();
  }
  std::unique_ptr<TrialLog> log_;
  std::mutex* lock_;
};
}  // namespace

void Master::tune_group(JobReport& r, const KernelSpec& spec, const Problem& p, const std::vector<int>& ranks,
                        const GroupContext& ctx) {
  json ready = json::object();
  const std::vector<int> group = prepare_group(r, ranks, &ready, ctx);
  if (group.empty()) return;
  const json& first = ready[std::to_string(group.front())];
  const DeviceInfo& device = *worker(group.front()).device;
  // The master builds the same target and space the workers built.
  const TuneTarget target = make_tune_target(spec, device, first.at("kernel_work_group_size").get<std::size_t>(),
                                             first.at("kernel_local_mem_bytes").get<std::uint64_t>(), p, spec.whole(p));
  SearchSpace space = make_search_space(spec, p, spec.whole(p), target);
  if (space.size() != first.at("space_size").get<std::size_t>()) {
    throw SearchAborted(fmt::format("the master's search space has {} configurations, the worker's {}; run the same "
                                    "wstuned build on every node", space.size(), first["space_size"].dump()));
  }
  const std::string strategy = tune_strategy(r.job, spec);
  auto searcher = make_searcher(strategy, 1);
  const unsigned budget = evaluation_budget(r.job.max_trials, spec, strategy, space);
  auto stop = budget ? max_evaluations(budget) : never_stop();
  const SessionSpec session_spec{std::string(searcher->name()),
                                 budget ? std::optional<std::int64_t>(budget) : std::nullopt, std::nullopt};
  std::unique_ptr<TrialLog> log;
  {
    const auto held = ctx.hold();
    log = std::make_unique<LockedLog>(sink_.open_trial_log(spec, target, session_spec), ctx.lock);
  }
  SearchGroup g{&ctx.comm, r.id, group, opt_.job_timeout, opt_.stop_requested, [&](int rank, const std::string& why) {
                  WorkerState& w = worker(rank);
                  w.alive = false;
                  w.problem = why;
                  fault(r, fmt::format("worker {} {}; dropped from the pool", w.label(), why), ctx);
                }};
  SharedEvaluator ev(std::move(g), target, std::move(space), *log, *searcher, *stop);
  TuneOptions topt;
  topt.timing = TimingOptions{1, std::max(1u, r.job.repetitions)};
  topt.lookup = [&](const Configuration& c) { return log->stored(c); };
  topt.on_trial = [&](const Trial&, TrialPhase phase) { ev.phase(phase); };
  const TuneResult res = tune(ev, *searcher, *stop, topt);
  ev.drain();
  const json session = log->finish(res);
  json trials = json::array();
  for (const auto& t : res.trials) trials.push_back(trial_summary(t));
  json by_rank = json::object();
  for (const auto& [rank, n] : ev.measured_by()) by_rank[std::to_string(rank)] = n;
  json result{{"strategy", res.strategy}, {"global", to_string(res.target.global)}, {"space_size", res.space_size},
              {"trials", trials}, {"best", trial_summary(res.best)},
              {"null_ms", res.baseline.ok() ? json(res.baseline.median_ms()) : json(nullptr)},
              {"rule", res.rule ? to_string(res.rule->local) : "null"}, {"evaluations", res.evaluations},
              {"tiebreak_trials", res.tiebreak_trials}, {"measured_by_rank", by_rank},
              {"measured_ahead_unused", ev.unused_ahead()}, {"stop_reason", res.stop_reason},
              {"wall_ms", res.wall_ms}, {"shared_by", group}, {"session", session}};
  const auto held = ctx.hold();
  note(fmt::format("job {}: {} worker(s) with fingerprint {} searched {} of {} configurations ({} stored before), best "
                   "{} {:.4f} ms", r.id, group.size(), device.fingerprint(), res.evaluations, res.space_size + 1,
                   session.value("resumed_trials", 0), to_string(res.best.configuration()), res.best.median_ms()));
  for (int rank : group) {
    const WorkerState& w = worker(rank);
    sink_.tuned(w, r.job, r.size, result);
    r.data.push_back(json{{"rank", w.rank}, {"host", w.host}, {"device", w.device->name},
                          {"fingerprint", w.device->fingerprint()}, {"measured", by_rank.value(std::to_string(rank), 0)},
                          {"result", result}});
  }
}

bool Master::shutdown() {
  std::set<int> waiting;
  for (const auto& w : workers_) {
    // A refused worker left when it read its refusal: it gets no shutdown
    // and is not waited for (issue 17: it stalled the master 10 s).
    if (!w.registered || !w.accepted) continue;
    comm_.send(w.rank, Message{Tag::shutdown, json::object(), {}});
    waiting.insert(w.rank);
  }
  const auto deadline = clock_type::now() + opt_.shutdown_timeout;
  while (!waiting.empty() && clock_type::now() < deadline) {
    auto got = comm_.recv(kAnySource, kSlice);
    if (got && got->message.tag == Tag::bye) waiting.erase(got->source);
  }
  comm_.flush(std::chrono::seconds(2));
  for (int rank : waiting) note(fmt::format("worker {} did not acknowledge shutdown", worker(rank).label()));
  return waiting.empty();
}

}  // namespace wstune::daemon
