// wstuned's master: worker registration, the job loop over the modes (run_mode.cpp,
// tune_mode.cpp, calibrate_mode.cpp), the report's JSON form and shutdown.
#include "master/master.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <ostream>
#include <set>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "format/json.hpp"
#include "master/router.hpp"
#include "protocol/kernel_source.hpp"
#include "search/strategies.hpp"
#include "session/autotune.hpp"
#include "session/tune_request.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/store.hpp"

#include "master/master_util.hpp"

namespace wstune::daemon {

std::string WorkerState::label() const {
  return fmt::format("rank {} on {}{} ({})", rank, host.empty() ? "?" : host, peer.empty() ? "" : " via " + peer,
                     device ? device->name : "no device");
}

std::optional<double> JobReport::joules() const {
  if (parts.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& p : parts) {
    if (!p.joules) return std::nullopt;
    sum += *p.joules;
  }
  return sum;
}

std::string JobReport::joules_note() const {
  if (parts.empty()) return "not measured: no part ran";
  // The parts without joules, grouped by why (in rank order of first sight).
  std::vector<std::pair<std::string, std::vector<std::string>>> why;
  for (const auto& p : parts) {
    if (p.joules) continue;
    auto it = std::find_if(why.begin(), why.end(), [&](const auto& w) { return w.first == p.energy_note; });
    if (it == why.end()) it = why.insert(why.end(), {p.energy_note, {}});
    it->second.push_back(fmt::format("r{}", p.rank));
  }
  std::vector<std::string> groups;
  for (const auto& [note, ranks] : why) groups.push_back(fmt::format("{} ({})", fmt::join(ranks, ", "), note));
  return groups.empty() ? std::string() : fmt::format("not measured: {}", fmt::join(groups, "; "));
}

json to_json(const JobReport& r) {
  json parts = json::array();
  for (const auto& p : r.parts) {
    parts.push_back(json{{"rank", p.rank},
                         {"host", p.host},
                         {"device", p.device},
                         {"fingerprint", p.fingerprint},
                         {"block", to_json(p.block)},
                         {"share", p.share},
                         {"local", to_string(p.local)},
                         {"local_source", p.local_source},
                         {"kernel_ms", p.kernel_ms},
                         {"kernel_median_ms", p.kernel_median_ms},
                         {"transfer_ms", p.transfer_ms},
                         {"return_ms", p.return_ms},
                         {"busy_ms", p.busy_ms},
                         {"build_ms", p.build_ms},
                         {"inputs_ms", p.inputs_ms},
                         {"answer_ms", p.answer_ms},
                         {"fixed_ms", p.fixed_ms},
                         {"scale", p.scale},
                         {"chunks", p.chunks},
                         {"overlap_wall_ms", p.overlap_wall_ms},
                         {"result_path", p.result_path},
                         {"trials", p.trials},
                         {"joules", p.joules ? json(*p.joules) : json(nullptr)},
                         {"energy_sensor", p.energy_sensor},
                         {"energy_note", p.energy_note}});
  }
  json j{{"id", r.id},
         {"mode", std::string(to_string(r.mode))},
         {"job", to_json(r.job)},
         {"size", r.size},
         {"status", std::string(to_string(r.status))},
         {"error", r.error},
         {"faults", r.faults},
         {"attempts", r.attempts},
         {"run_key", r.run_key},
         {"index", r.index}};
  if (r.mode == Mode::run) {
    j["model"] = r.plan.blocks.empty() ? std::string() : std::string(to_string(r.plan.model));
    j["dim"] = r.plan.dim;
    j["fractions"] = r.plan.fractions;
    j["units"] = block_units(r.plan.blocks);
    j["plan_note"] = r.plan.note;
    j["parts"] = parts;
    j["makespan_ms"] = r.makespan_ms;
    j["joules"] = r.joules() ? json(*r.joules()) : json(nullptr);
    j["joules_note"] = r.joules_note();
    j["overhead_ms"] = r.overhead_ms;
    j["verify_ms"] = r.verify_ms;
    if (!r.timeline.is_null()) j["critical_path"] = r.timeline.at("critical_path");
    j["verified"] = r.verdict.ok;
    j["verify"] =
        json{{"max_error", r.verdict.max_error}, {"tolerance", r.verdict.tolerance}, {"detail", r.verdict.detail}};
  } else {
    j["workers"] = r.data;
  }
  return j;
}

Master::Master(Communicator& comm, ResultSink& sink, MasterOptions options)
    : intake_(comm, *this), comm_(intake_), launch_size_(comm.size()), sink_(sink), opt_(std::move(options)) {
  for (int r = 1; r < comm_.size(); ++r) {
    WorkerState w;
    w.rank = r;
    workers_.push_back(w);
  }
}

WorkerState& Master::worker(int rank) {
  const std::lock_guard lock(workers_mutex_);
  // A rank that connected since (TcpHub) gets its state on first sight.
  while (rank >= 1 && static_cast<int>(workers_.size()) < rank) {
    WorkerState w;
    w.rank = static_cast<int>(workers_.size()) + 1;
    workers_.push_back(w);
  }
  return workers_.at(static_cast<std::size_t>(rank - 1));
}

const WorkerState& Master::worker(int rank) const {
  const std::lock_guard lock(workers_mutex_);
  return workers_.at(static_cast<std::size_t>(rank - 1));
}

std::optional<Received> Master::Intake::recv(int source, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    const auto left = std::max(std::chrono::milliseconds(0),
                               std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()));
    auto got = ForwardingCommunicator::recv(source, left);
    if (!got || !master_.take_unasked(*got)) return got;
    if (clock_type::now() >= deadline) return std::nullopt;
  }
}

// A first hello (any rank during registration; after it, a connected
// worker's) is answered here; a bye with a reason marks its worker gone.
bool Master::take_unasked(const Received& got) {
  if (got.source < 1) return false;
  WorkerState& w = worker(got.source);
  if (got.message.tag == Tag::hello && !w.registered && (!registered_ || got.source >= launch_size_)) {
    take_hello(got);
    return true;
  }
  if (got.message.tag == Tag::bye && got.message.body.contains("reason") && !w.gone) {
    w.alive = false;
    w.gone = true;
    w.problem = got.message.body.value("reason", std::string("left"));
    note(fmt::format("worker {} left the pool: {}", w.label(), w.problem));
  }
  return false;
}

std::vector<int> Master::take_joiners(const std::string& fp) {
  std::vector<int> out;
  const std::lock_guard lock(workers_mutex_);
  for (auto it = joined_.begin(); it != joined_.end();) {
    const WorkerState& w = workers_.at(static_cast<std::size_t>(*it - 1));
    if (w.usable() && w.device->fingerprint() == fp) {
      out.push_back(*it);
      it = joined_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void Master::store_joined() {
  std::vector<WorkerState> unput;
  {
    const std::lock_guard lock(workers_mutex_);
    for (int rank : device_unput_) unput.push_back(workers_.at(static_cast<std::size_t>(rank - 1)));
    device_unput_.clear();
  }
  if (!unput.empty()) sink_.workers(unput);
}

bool Master::stopped() const {
  return opt_.stop_requested && opt_.stop_requested();
}

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
                                   "wstuned build on every node",
                                   h.protocol, kProtocolVersion)};
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
  while (!registration_complete() && clock_type::now() < deadline && !stopped()) {
    // Intake answers the hellos; anything else is noted and ignored.
    auto got = comm_.recv(kAnySource, slice_until(deadline));
    if (!got || got->source < 1 || got->source >= comm_.size()) continue;
    note(fmt::format("ignoring a {} message from rank {} during registration", to_string(got->message.tag),
                     got->source));
  }
  mark_unregistered();
  {
    const std::lock_guard lock(workers_mutex_);
    registered_ = true;
    joined_.clear();
    device_unput_.clear();
  }
  sink_.workers(std::vector<WorkerState>(workers_.begin(), workers_.end()));
  return static_cast<std::size_t>(
      std::count_if(workers_.begin(), workers_.end(), [](const WorkerState& w) { return w.usable(); }));
}

bool Master::registration_complete() const {
  const std::lock_guard lock(workers_mutex_);
  std::size_t joined = 0;
  for (const auto& w : workers_) {
    if (w.rank < launch_size_ && !w.registered) return false;
    if (w.rank >= launch_size_ && w.registered) ++joined;
  }
  return joined >= opt_.wait_joined;
}

// A worker's first hello is answered with a welcome (or a refusal) and
// noted: true.
bool Master::take_hello(const Received& got) {
  WorkerState& w = worker(got.source);
  if (w.registered) return false;
  w.registered = true;
  w.peer = comm_.peer(got.source);
  const bool joining = registered_;
  Welcome answer = welcome_for(w, got.message);
  answer.rank = w.rank;
  w.accepted = answer.accepted;
  w.alive = true;
  w.problem = answer.reason;
  comm_.send(w.rank, answer.to_message());
  if (w.accepted) {
    note(fmt::format("worker {} {}: {} CU x {} PE, fingerprint {}", w.label(), joining ? "joined" : "registered",
                     w.device->compute_units, w.device->pe_per_cu, w.device->fingerprint()));
    if (joining) {
      const std::lock_guard lock(workers_mutex_);
      joined_.push_back(w.rank);
      device_unput_.push_back(w.rank);
    }
  } else {
    note(fmt::format("worker rank {} on {} refused: {}", w.rank, w.host.empty() ? "?" : w.host, w.problem));
  }
  return true;
}

// Marks the workers that never said hello dead, each noted.
void Master::mark_unregistered() {
  for (auto& w : workers_) {
    if (!w.registered && w.rank < launch_size_) {
      w.alive = false;
      w.problem = fmt::format("did not register within {} s", opt_.register_timeout.count() / 1000.0);
      note(fmt::format("worker rank {} {}", w.rank, w.problem));
    }
  }
}

std::string_view to_string(JobStatus s) noexcept {
  switch (s) {
    case JobStatus::ok:
      return "ok";
    case JobStatus::failed:
      return "failed";
    case JobStatus::interrupted:
      return "interrupted";
    case JobStatus::stored:
      return "stored";
  }
  return "?";
}

JobStatus parse_job_status(std::string_view text) {
  for (JobStatus s : {JobStatus::ok, JobStatus::failed, JobStatus::interrupted, JobStatus::stored})
    if (to_string(s) == text) return s;
  throw UsageError(fmt::format("unknown job status '{}': use ok, failed, interrupted or stored", text));
}

std::string run_key(Mode mode, const std::vector<Job>& jobs) {
  json list = json::array();
  for (const Job& j : jobs) list.push_back(to_json(j));
  return fnv1a_hex(fmt::format("{}\n{}", to_string(mode), list.dump()));
}

namespace {

// Why a job whose status is stored did not run: a tune job's devices are all
// tuned (tune_job() skips them without --resume); a run or calibrate job was
// stored by an earlier run of the same list (only with --resume).
std::string_view stored_reason(Mode mode) {
  return mode == Mode::tune ? ": every device is tuned for it (a best is stored): not run again"
                            : " by an earlier run of this job list (--resume): not run again";
}

// A run job's energy for its progress line: "N J (sensor, ...)" or "energy not measured: ...".
std::string joules_text(const JobReport& r) {
  if (const auto j = r.joules()) {
    std::vector<std::string> sensors;
    for (const auto& p : r.parts)
      if (std::find(sensors.begin(), sensors.end(), p.energy_sensor) == sensors.end())
        sensors.push_back(p.energy_sensor);
    return fmt::format("{:.3f} J ({})", *j, fmt::join(sensors, ", "));
  }
  return "energy " + r.joules_note();
}

}  // namespace

std::vector<JobReport> Master::run_all(Mode mode, const std::vector<Job>& jobs) {
  std::vector<JobReport> reports;
  const std::string key = run_key(mode, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    store_joined();
    if (stopped()) {
      note(fmt::format("stop requested: {} job(s) not started", jobs.size() - i));
      break;
    }
    JobReport r = run_one(mode, jobs[i], key, i);
    std::string line = fmt::format("[{}/{}] {} {} {}: {}", i + 1, jobs.size(), to_string(mode), r.job.kernel, r.size,
                                   to_string(r.status));
    if (r.status == JobStatus::stored) {
      line += stored_reason(mode);
    } else if (mode == Mode::run && r.ok()) {
      std::vector<std::string> shares;
      for (const auto& p : r.parts) shares.push_back(fmt::format("r{} {:.0f}%", p.rank, 100 * p.share));
      line += fmt::format(", makespan {:.2f} ms, {}, overhead {:.2f} ms, split {} ({}), verified", r.makespan_ms,
                          joules_text(r), r.overhead_ms, to_string(r.plan.model), fmt::join(shares, " "));
      if (!r.plan.note.empty()) line += " (" + r.plan.note + ")";
      if (!r.timeline.is_null()) line += "; " + critical_path_text(r.timeline.at("critical_path"));
    } else if (r.ok()) {
      line += fmt::format(", {} worker(s)", r.data.size());
    }
    if (!r.error.empty()) line += " - " + r.error;
    if (!r.faults.empty()) line += fmt::format(" [{} fault(s)]", r.faults.size());
    note(line);
    reports.push_back(std::move(r));
  }
  store_joined();
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
    r.size = resolve_problem(*spec, job.size).text;
  } catch (const UsageError& e) {
    r.status = JobStatus::failed;
    r.error = e.what();
    return r;
  }
  if (opt_.resume && mode == Mode::run && sink_.stored(mode, run_key, index, job, r.size, nullptr)) {
    r.status = JobStatus::stored;
    return r;
  }
  // A job that fails on the master's side (host memory for a size the parser
  // accepts, a message over MPI's count limit, a database that refuses)
  // fails alone: the master reports it and goes on (issue 17: an uncaught
  // std::bad_alloc ended the whole run).
  const JobReport start = r;
  try {
    switch (mode) {
      case Mode::run:
        return run_job(std::move(r));
      case Mode::tune:
        return tune_job(std::move(r));
      case Mode::calibrate:
        return fanout_job(std::move(r), Tag::calibrate, Tag::calibrate_result);
    }
  } catch (const std::bad_alloc&) {
    r = start;
    r.status = JobStatus::failed;
    r.error = fmt::format(
        "out of memory: the master could not allocate the host buffers of {} {} "
        "(std::bad_alloc); use a smaller size or more memory",
        r.job.kernel, r.size);
  } catch (const std::exception& e) {
    r = start;
    r.status = JobStatus::failed;
    r.error = fmt::format("the master failed on this job: {}", e.what());
  }
  return r;
}

const json& Master::packed(const Job& job) {
  static const json none;
  if (job.kernel_file.empty()) return none;
  auto& p = packed_[job.kernel_file];
  if (p.is_null()) p = pack_tuning_file(job.kernel_file);
  return p;
}

bool Master::shutdown() {
  std::set<int> waiting;
  for (const auto& w : workers_) {
    // A refused worker left when it read its refusal: it gets no shutdown
    // and is not waited for (issue 17: it stalled the master 10 s).
    if (!w.registered || !w.accepted) continue;
    if (w.gone) continue;  // drained, or its connection ended: nobody to tell
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
