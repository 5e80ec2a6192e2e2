#include "worker/worker.hpp"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "format/json.hpp"
#include "protocol/kernel_source.hpp"
#include "split/split.hpp"
#include "worker/tasks.hpp"

namespace wstune::daemon {

using nlohmann::json;
using clock_type = std::chrono::steady_clock;

std::string_view to_string(FaultKind f) noexcept {
  switch (f) {
    case FaultKind::none:
      return "none";
    case FaultKind::build:
      return "build";
    case FaultKind::kernel:
      return "kernel";
    case FaultKind::hang:
      return "hang";
    case FaultKind::crash:
      return "crash";
    case FaultKind::stall:
      return "stall";
  }
  return "none";
}

FaultKind parse_fault(std::string_view text) {
  for (auto f : {FaultKind::build, FaultKind::kernel, FaultKind::hang, FaultKind::crash, FaultKind::stall})
    if (to_string(f) == text) return f;
  throw UsageError(fmt::format("unknown fault '{}': use build, kernel, hang, crash or stall", text));
}

Worker::Worker(Communicator& comm, std::optional<Device> device, std::string device_error, WorkerOptions options)
    : comm_(comm),
      device_(std::move(device)),
      device_error_(std::move(device_error)),
      opt_(std::move(options)),
      results_(opt_.output_memory),
      rank_(comm_.rank()) {}

Worker::~Worker() = default;

void Worker::say(const std::string& line) {
  if (opt_.log) *opt_.log << fmt::format("wstuned[{}]: {}", rank_, line) << std::endl;
}

DeviceRunner& Worker::runner_for(const KernelSpec& spec, const std::string& key, double* build_ms) {
  auto it = runners_.find(key);
  if (it != runners_.end()) {
    if (build_ms) *build_ms = 0;
    return *it->second;
  }
  const auto t0 = clock_type::now();
  // The injected build fault passes an option no compiler knows: a real
  // clBuildProgram failure (CL_INVALID_BUILD_OPTIONS).
  const std::string options = opt_.fault == FaultKind::build ? "-cl-wstune-injected-build-fault" : "";
  auto runner = std::make_unique<DeviceRunner>(*device_, spec, options);
  if (build_ms) *build_ms = ms_since(t0);
  return *runners_.emplace(key, std::move(runner)).first->second;
}

namespace {
// What a problem's generated inputs depend on: kernel (runner key), size, parameters, seed.
std::string inputs_id(const std::string& key, const Problem& p, std::uint64_t seed) {
  return fmt::format("{}|{}|{}|{}", key, p.text, p.params.dump(), seed);
}
}  // namespace

const std::vector<HostBuffer>& Worker::inputs_for(const KernelSpec& spec, const std::string& key, const Problem& p,
                                                  std::uint64_t seed, double* ms) {
  const std::string id = inputs_id(key, p, seed);
  const auto t0 = clock_type::now();
  if (inputs_.first != id) {
    inputs_.second.clear();  // the old problem's memory first
    inputs_ = {id, spec.generate_inputs(p, seed)};
  }
  if (ms) *ms = ms_since(t0);
  return inputs_.second;
}

// A run_block's inputs: views of the problem's (generated once per problem
// and seed; KernelSpec::block_inputs copies nothing), so a job whose block
// differs from the last one's uploads straight from the problem's inputs;
// `ms` is the input generation's time (0 when cached). The views go before
// the problem's inputs they point into. Pinned memory is not used here:
// pinning a new block's 128 MB cost more than the copies it saves
// (docs/daemon.md).
const std::vector<HostBuffer>& Worker::block_inputs_for(const KernelSpec& spec, const std::string& key,
                                                        const Problem& p, std::uint64_t seed, const Block& b,
                                                        double* ms) {
  const std::string id = fmt::format("{}|{}:{}-{}", inputs_id(key, p, seed), b.dim, b.begin, b.end);
  if (ms) *ms = 0;
  if (block_inputs_.first == id) return block_inputs_.second;
  block_inputs_ = {};  // the old block's memory first
  block_inputs_ = {id, spec.block_inputs(p, inputs_for(spec, key, p, seed, ms), b)};
  return block_inputs_.second;
}

// A run_block's inputs sent by the master (RunBlock::sent_inputs): each
// written at its place in the problem's inputs, kept while the problem and
// seed stay (an input sent whole once is not sent again), and the block's
// views of them, as block_inputs_for() gives. Throws Error for an input
// the master took as held but this worker does not hold whole.
const std::vector<HostBuffer>& Worker::sent_block_inputs(const KernelSpec& spec, const std::string& key,
                                                         const Problem& p, const RunBlock& job,
                                                         const std::vector<HostBuffer>& sent) {
  const std::string id = inputs_id(key, p, job.seed) + "|master";
  if (inputs_.first != id) {
    block_inputs_ = {};  // views of the old inputs first
    inputs_ = {id, std::vector<HostBuffer>(job.sent_inputs.size())};
    whole_inputs_.clear();
  }
  for (const SentInput& in : job.sent_inputs) {
    if (in.index >= inputs_.second.size())
      throw Error(fmt::format("run_block: sent input {} of {}", in.index, inputs_.second.size()));
    HostBuffer& whole = inputs_.second[in.index];
    if (whole.size() != in.whole) whole = HostBuffer::uninitialized(parse_element_type(in.type), in.whole);
    if (!in.buffer) {
      if (!whole_inputs_.count(in.index))
        throw Error(
            fmt::format("input {} of {} {} was taken as sent whole before, but this worker does not hold it "
                        "(a new isolated process?); run the job again",
                        in.index, job.kernel, job.size));
      continue;
    }
    whole.write(in.offset, sent.at(*in.buffer));
    if (in.offset == 0 && sent[*in.buffer].size() == in.whole) whole_inputs_.insert(in.index);
  }
  block_inputs_ = {};
  block_inputs_ = {id, spec.block_inputs(p, inputs_.second, job.block)};
  return block_inputs_.second;
}

namespace {
// The runner cache key of a job's kernel: the built-in name, or the hash of
// the packed kernel file.
std::string kernel_key_of(const std::string& name, const json& packed) {
  return packed.is_null() ? name : "file:" + packed.value("hash", "");
}

TrialStatus status_of(const std::exception& e) {
  if (dynamic_cast<const BuildError*>(&e)) return TrialStatus::compile;
  return TrialStatus::runtime;
}

// A copy of `b` whose bytes come from `memory` (the heap when null): a copy
// assignment keeps the target's resource.
HostBuffer copy_into(const HostBuffer& b, std::pmr::memory_resource* memory) {
  HostBuffer c = HostBuffer::uninitialized(b.type(), 0, memory);
  c = b;
  return c;
}

// A block as an overlapped run: its chunks (overlap_blocks(); inputs are
// views of the problem's) and their outputs, read back into `memory`, in
// chunk order.
struct ChunkedBlock {
  std::vector<OverlapChunk> chunks;  // empty: the block runs whole
  std::vector<HostBuffer> outputs;
};

ChunkedBlock chunk_block(const KernelSpec& spec, const Problem& p, const Block& b, const LocalSize& local,
                         unsigned overlap, const std::vector<HostBuffer>& problem_inputs,
                         const std::vector<HostBuffer>& block_inputs, std::pmr::memory_resource* memory) {
  ChunkedBlock cb;
  for (const Block& sub : overlap_blocks(spec, p, b, overlap, local)) {
    // A kernel whose block inputs are copies, not views, runs its blocks whole.
    OverlapChunk c{sub, views_within(block_inputs, spec.block_inputs(p, problem_inputs, sub), block_inputs), {}};
    if (c.inputs.size() != block_inputs.size()) return {};
    for (const auto& o : spec.outputs(p, sub)) {
      cb.outputs.push_back(HostBuffer::uninitialized(o.type, o.read_count, memory));
      c.targets.push_back(ReadTarget{cb.outputs.back().data(), cb.outputs.back().bytes(), 0, 0});
    }
    cb.chunks.push_back(std::move(c));
  }
  return cb;
}

// One entry of BlockResult::timeline.
json timeline_span(const std::string& what, double start_ms, double end_ms, int chunk = -1) {
  return json{{"what", what}, {"chunk", chunk}, {"start_ms", start_ms}, {"end_ms", end_ms}};
}

// A run_block's result as far as the request says: job, attempt, block and
// the time its message took to receive.
BlockResult block_result_for(const RunBlock& job, double recv_ms) {
  BlockResult res;
  res.job = job.job;
  res.attempt = job.attempt;
  res.block = job.block;
  res.recv_ms = recv_ms;
  return res;
}
}  // namespace

// The job's local size by its policy (tune: a search on the block, uploaded
// first); the driver's default when the runner cannot run the one chosen.
LocalSize Worker::block_local(DeviceRunner& runner, const Problem& p, const RunBlock& job,
                              const std::vector<HostBuffer>& inputs, BlockResult& res) {
  // A kernel file whose local size is an expression of its parameters (T1
  // LocalSize, e.g. the tiled matmul's TSN/WPTN x TSM/WPTM) runs only that
  // one, never NULL (its __local tiles assume it): the launch judges it, as
  // a tune's runs do, and a refusal is the block's error.
  if (const LocalSize fixed = runner.spec().parameter_local(p)) {
    res.local_source = "parameters";
    return fixed;
  }
  LocalSize local = policy_local(runner, p, job, inputs, res);
  if (std::string why = runner.check_local(p, job.block, local); !why.empty()) {
    res.local_source = fmt::format("null (fallback: {})", why);
    local = std::nullopt;
  }
  return local;
}

// The local size of job.policy (block_local() without a fixed one).
LocalSize Worker::policy_local(DeviceRunner& runner, const Problem& p, const RunBlock& job,
                               const std::vector<HostBuffer>& inputs, BlockResult& res) {
  LocalSize local;
  switch (job.policy) {
    case LocalPolicy::null:
      res.local_source = "null";
      break;
    case LocalPolicy::rule:
      local = rule_local(runner, p, job.block);
      res.local_source = "rule";
      break;
    case LocalPolicy::stored:
      local = job.local;
      res.local_source = "stored";
      break;
    case LocalPolicy::tune: {
      runner.upload(p, job.block, inputs);
      res.trials = tune_block(runner, p, job.block, std::max(1u, job.repetitions), 0);
      local = local_from_json(res.trials["best"]["local"]);
      res.local_source = "tune";
      break;
    }
  }
  return local;
}

// Runs the block whole (upload, warm-up + repetitions, one read-back) or,
// with job.overlap > 1 and a block that chunks, as chunks over two queues,
// each chunk's kernel run warm-up + repetitions times between its upload
// and its read-back; fills res's times and chunks. The outputs are the
// block's, or each chunk's in chunk order.
RunResult Worker::run_job_block(DeviceRunner& runner, const KernelSpec& spec, const Problem& p, const RunBlock& job,
                                const std::vector<HostBuffer>& inputs, BlockResult& res,
                                std::pmr::memory_resource* memory) {
  const LocalSize local = block_local(runner, p, job, inputs, res);
  ChunkedBlock cb = chunk_block(spec, p, job.block, local, job.overlap, inputs_.second, inputs, memory);
  // Resident: the device keeps these inputs for the next job of the same problem and seed.
  const std::string resident = job.resident ? inputs_.first : std::string();
  RunResult r;
  if (cb.chunks.empty()) {
    if (job.policy != LocalPolicy::tune) runner.upload(p, job.block, inputs, resident);
    r = runner.run(p, job.block, local, TimingOptions{job.warmup, job.repetitions}, true, memory);
    res.h2d_wall_ms = r.h2d_wall_ms;
    res.d2h_wall_ms = r.d2h_wall_ms;
  } else {
    const double compiled = runner.compiled_ms();
    r = runner.run_overlapped(p, cb.chunks, local, job.warmup + job.repetitions, resident);
    res.overlap_wall_ms = r.wall_ms - (runner.compiled_ms() - compiled);  // builds are not the block's time
    const auto warm = std::min<std::size_t>(job.warmup, r.kernel.ms.size());
    r.kernel.ms.erase(r.kernel.ms.begin(), r.kernel.ms.begin() + static_cast<std::ptrdiff_t>(warm));
    for (const auto& c : cb.chunks) res.chunks.push_back(c.block);
    r.outputs = std::move(cb.outputs);
  }
  res.local = local;
  res.kernel = std::move(r.kernel);
  res.h2d = std::move(r.h2d);
  res.d2h = std::move(r.d2h);
  return r;
}

// Where the block's outputs are read back: the master's result slot when it
// names one that maps here (a failure is reported in res.shared_error and
// the outputs travel as bytes), else opt_.output_memory.
std::pmr::memory_resource* Worker::output_memory_for(const RunBlock& job, BlockResult& res) {
  if (!job.result_slot) {
    results_.clear();
    return opt_.output_memory;
  }
  res.shared_error = results_.begin(*job.result_slot);
  if (!res.shared_error.empty()) say(fmt::format("job {}: {}; the outputs travel as bytes", job.job, res.shared_error));
  return res.shared_error.empty() ? &results_ : opt_.output_memory;
}

// The outputs that travel in the message; with `in_slot` (read back through
// the master's result slot) those in the slot are listed in res.shared
// instead, and one that did not fit is copied into opt_.output_memory, since
// a message may outlive this worker's result target.
std::vector<HostBuffer> Worker::outputs_to_send(std::vector<HostBuffer>& outputs, BlockResult& res,
                                                bool in_slot) const {
  if (!in_slot) return std::move(outputs);
  std::vector<HostBuffer> travel;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const HostBuffer& out = outputs[i];
    if (out.empty())  // nothing read back (a device-only buffer): no bytes either way
      res.shared.push_back(SharedOutput{i, 0, out.type(), 0});
    else if (const auto offset = results_.offset_of(out.data(), out.bytes()))
      res.shared.push_back(SharedOutput{i, *offset, out.type(), out.size()});
    else  // into the memory outputs use without a slot (the isolated process's files: no copy on the socket)
      travel.push_back(copy_into(out, opt_.output_memory));
  }
  return travel;
}

void Worker::handle_run(Received& got) {
  const auto t0 = clock_type::now();
  const RunBlock job = RunBlock::from(got.message);
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering job {}", job.job));
    return;
  }
  try {
    answer_run(job, got.message.buffers, got.recv_ms, t0);
  } catch (const std::bad_alloc&) {
    out_of_memory(job);
  } catch (const std::exception& e) {
    say(fmt::format("job {} failed: {}", job.job, e.what()));
    send_run_error(job, status_of(e), e.what());
  }
}

// Answers a run_block with a worker_error.
void Worker::send_run_error(const RunBlock& job, TrialStatus status, const std::string& text) {
  comm_.send(0, WorkerError{job.job, job.attempt, status, text}.to_message());
}

// Runs the block of `job` (received in `recv_ms`, handled since `t0`) and
// sends its result, or the worker_error of a kernel that failed.
void Worker::answer_run(const RunBlock& job, const std::vector<HostBuffer>& sent, double recv_ms,
                        clock_type::time_point t0) {
  const std::optional<double> energy_before = read_counter_j(observer_.get());
  const auto spec_ptr = worker_kernel(job.kernel, job.kernel_file);
  const KernelSpec& spec = *spec_ptr;
  const std::string key = kernel_key_of(job.kernel, job.kernel_file);
  const Problem p = job_problem(spec, job.size, job.params);
  BlockResult res = block_result_for(job, recv_ms);
  res.clock_ms = std::chrono::duration<double, std::milli>(t0.time_since_epoch()).count();
  const auto at = [&] { return ms_since(t0); };  // the timeline's clock: ms from the receipt
  res.timeline.push_back(timeline_span("receive", -recv_ms, 0));
  double from = at();
  DeviceRunner& runner = runner_for(spec, key, &res.build_ms);
  if (res.build_ms > 0) res.timeline.push_back(timeline_span("build", from, at()));
  const double compiled = runner.compiled_ms();
  if (opt_.fault == FaultKind::kernel) {
    send_run_error(job, TrialStatus::runtime, "injected kernel fault (--inject-fault): the kernel was not run");
    return;
  }
  // The inputs are generated here from the seed, or come with the job (inputs: master).
  from = at();
  const auto& inputs = job.sent_inputs.empty() ? block_inputs_for(spec, key, p, job.seed, job.block, &res.inputs_ms)
                                               : sent_block_inputs(spec, key, p, job, sent);
  if (!job.sent_inputs.empty()) res.inputs_ms = at() - from;  // placing the received inputs
  if (res.inputs_ms > 0) res.timeline.push_back(timeline_span("inputs", from, at()));
  std::pmr::memory_resource* memory = output_memory_for(job, res);
  RunResult r = run_job_block(runner, spec, p, job, inputs, res, memory);
  for (const RunSpan& s : r.spans)  // the host's steady clock → ms from the receipt
    res.timeline.push_back(timeline_span(s.what, s.start_ms - res.clock_ms, s.end_ms - res.clock_ms, s.chunk));
  if (!r.ok()) {
    send_run_error(job, r.status, r.error);
    return;
  }
  // Every program this job built (a kernel file's parameters, a
  // non-uniform build) is build time, never the master's fixed cost.
  res.build_ms += runner.compiled_ms() - compiled;
  std::vector<HostBuffer> travel = outputs_to_send(r.outputs, res, memory == &results_);
  res.joules = joules_per_round(energy_before, read_counter_j(observer_.get()), 1);
  res.energy_sensor = res.joules ? std::string(observer_->sensor()) : std::string();
  res.energy_note = res.joules ? std::string() : observer_ ? "the energy counter could not be read" : energy_note_;
  res.busy_ms = ms_since(t0);
  comm_.send(0, res.to_message(std::move(travel)));
}

// Frees the cached inputs and answers `job` with an out-of-memory error.
void Worker::out_of_memory(const RunBlock& job) {
  block_inputs_ = {};
  inputs_ = {};
  const std::string text = fmt::format(
      "out of memory: the worker could not allocate the inputs or buffers of {} {} "
      "(std::bad_alloc); use a smaller size or more memory",
      job.kernel, job.size);
  say(fmt::format("job {} failed: {}", job.job, text));
  send_run_error(job, TrialStatus::runtime, text);
}

void Worker::handle_work(const Received& got) {
  const WorkRequest req = WorkRequest::from(got.message);
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering job {}", req.job));
    return;
  }
  const Tag answer = got.message.tag == Tag::tune ? Tag::tune_result : Tag::calibrate_result;
  try {
    const auto t0 = clock_type::now();
    const auto spec_ptr = worker_kernel(req.kernel, req.kernel_file);
    const KernelSpec& spec = *spec_ptr;
    const Problem p = job_problem(spec, req.size, req.params);
    const std::string key = kernel_key_of(req.kernel, req.kernel_file);
    DeviceRunner& runner = runner_for(spec, key, nullptr);
    if (opt_.fault == FaultKind::kernel) {
      comm_.send(0,
                 WorkerError{req.job, 0, TrialStatus::runtime, "injected kernel fault (--inject-fault)"}.to_message());
      return;
    }
    json data;
    if (answer == Tag::tune_result) {
      // Prepared for the master's trials: inputs, reference, upload.
      prepared_.reset();
      prepared_ = whole_evaluator(runner, p, req.seed, trial_energy(req.energy));
      prepared_job_ = req.job;
      data = json{{"kernel_work_group_size", runner.kernel_work_group_size()},
                  {"kernel_local_mem_bytes", runner.kernel_local_mem_bytes()},
                  {"reference_params", prepared_->target().reference_params},
                  {"rejected_references", prepared_->target().rejected_references},
                  {"energy_sensor", prepared_->target().energy_sensor},
                  {"energy_note", prepared_->target().energy_note},
                  {"setup_ms", ms_since(t0)}};
    } else {
      prepared_.reset();  // the calibration's slices replace what a prepared search uploaded
      data = calibrate_device(runner, p, inputs_for(spec, key, p, req.seed, nullptr),
                              split_dimension(spec, SplitDirection::auto_), req.repetitions,
                              CalibrationBudget{req.calibrate_budget_ms});
    }
    comm_.send(0, WorkResult{req.job, data}.to_message(answer));
  } catch (const std::exception& e) {
    say(fmt::format("job {} failed: {}", req.job, e.what()));
    comm_.send(0, WorkerError{req.job, 0, status_of(e), e.what()}.to_message());
  }
}

void Worker::handle_trial(const Received& got) {
  const TrialRequest req = TrialRequest::from(got.message);
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering job {}", req.job));
    return;
  }
  if (!prepared_ || prepared_job_ != req.job) {
    comm_.send(0, WorkerError{req.job, 0, TrialStatus::runtime,
                              fmt::format("{}: job {} was not prepared on this worker", kNotPrepared, req.job)}
                      .to_message());
    return;
  }
  // Evaluators never throw for a failing configuration: the trial says why.
  comm_.send(0, TrialAnswer{req.job, prepared_->evaluate(req.config, req.timing)}.to_message());
}

// A trial through the isolated process: one that died since the job was
// prepared (a crash, a timeout) left a new process that knows nothing of
// the job, so the rank prepares it again and retries once.
void Worker::delegate_trial(Received& got) {
  Received again = got;
  Message answer = opt_.delegate->handle(got);
  if (answer.tag == Tag::worker_error && setup_ && WorkerError::from(answer).text.rfind(kNotPrepared, 0) == 0) {
    Received setup = *setup_;
    Message ready = opt_.delegate->handle(setup);
    answer = ready.tag == Tag::tune_result ? opt_.delegate->handle(again) : std::move(ready);
  }
  comm_.send(0, std::move(answer));
}

void Worker::delegate(Received& got) {
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering a {} request", to_string(got.message.tag)));
    return;
  }
  if (got.message.tag == Tag::tune) setup_ = got;
  if (got.message.tag == Tag::trial) return delegate_trial(got);
  comm_.send(0, opt_.delegate->handle(got));
}

// Opens the device's energy observer (measuring its update period, up to
// a second) before registering, so no job waits for it.
void Worker::open_energy_observer() {
  if (!device_ || opt_.delegate) return;
  ObserverChoice c = make_energy_observer(*device_, opt_.energy);
  observer_ = std::move(c.observer);
  energy_note_ = std::move(c.why_not);
}

// A tune job's trial observation: the device's observer when the job `asked`.
TrialEnergy Worker::trial_energy(bool asked) const {
  if (!asked) return TrialEnergy("not asked: no objective of the job needs energy");
  return TrialEnergy(observer_, energy_note_, opt_.energy);
}

// Registers with the master: this rank's device, or why there is none.
void Worker::send_hello() {
  Hello hello;
  hello.protocol = opt_.protocol;
  hello.rank = comm_.rank();
  hello.host = opt_.host;
  hello.selector = opt_.selector;
  if (device_) hello.device = device_->info;
  hello.error = device_error_;
  comm_.send(0, hello.to_message());
}

int Worker::serve() {
  open_energy_observer();
  send_hello();
  const auto welcome_deadline = clock_type::now() + opt_.welcome_timeout;
  std::optional<clock_type::time_point> stop_seen;
  bool welcomed = false;
  for (;;) {
    if (!stop_seen && opt_.stop_requested && opt_.stop_requested()) stop_seen = clock_type::now();
    // Drained: the trial it was running is answered (requests run to their
    // end before the loop comes back here); what the master sent since is
    // given to other workers when it reads the bye.
    if (stop_seen && opt_.leave_on_stop) return leave("drained: stopped by a signal");
    // A message already waiting comes first: after a long block the master's
    // shutdown may be there, and it deserves a bye rather than a silent exit.
    auto got = comm_.recv(0, std::chrono::milliseconds(100));
    const std::optional<int> code = got ? take(*got, welcomed) : given_up(stop_seen, welcomed, welcome_deadline);
    if (code) return *code;
  }
}

// With no message from the master: 4 once a signal had no shutdown within
// the grace time, or no welcome came in time; else nothing (wait on).
std::optional<int> Worker::given_up(std::optional<clock_type::time_point> stop_seen, bool welcomed,
                                    clock_type::time_point welcome_deadline) {
  if (!comm_.connected(0)) {
    say("the connection to the master ended; exiting");
    return 4;
  }
  if (stop_seen && clock_type::now() - *stop_seen > opt_.stop_grace) {
    say("signal received and no shutdown from the master; exiting");
    return 4;
  }
  if (!welcomed && clock_type::now() > welcome_deadline) {
    say("no welcome from the master; exiting");
    return 4;
  }
  return std::nullopt;
}

// One message from the master; serve()'s return when it ends the loop (a
// refusal, a shutdown). A bad message is answered with a worker_error.
std::optional<int> Worker::take(Received& got, bool& welcomed) {
  try {
    switch (got.message.tag) {
      case Tag::welcome:
        return take_welcome(got, welcomed);
      case Tag::run_block:
      case Tag::tune:
      case Tag::calibrate:
      case Tag::trial:
        handle_request(got);
        break;
      case Tag::shutdown:
        comm_.send(0, Message{Tag::bye, json::object(), {}});
        comm_.flush(std::chrono::seconds(5));
        return 0;
      default:
        say(fmt::format("ignoring an unexpected {} message", to_string(got.message.tag)));
    }
  } catch (const ProtocolError& e) {
    say(fmt::format("bad message from the master: {}", e.what()));
    comm_.send(0, WorkerError{0, 0, TrialStatus::runtime, fmt::format("bad message: {}", e.what())}.to_message());
  }
  return std::nullopt;
}

// The master's welcome: 3 when it refused this worker, else nothing (now welcomed).
std::optional<int> Worker::take_welcome(const Received& got, bool& welcomed) {
  const Welcome w = Welcome::from(got.message);
  if (!w.accepted) {
    say(fmt::format("refused by the master: {}", w.reason));
    comm_.flush(std::chrono::seconds(2));
    return 3;
  }
  welcomed = true;
  if (w.rank > 0) rank_ = w.rank;
  return std::nullopt;
}

// Leaves the master's pool on its own: a bye that says why, then 0.
int Worker::leave(const std::string& reason) {
  say(fmt::format("leaving: {}", reason));
  comm_.send(0, Message{Tag::bye, json{{"reason", reason}}, {}});
  comm_.flush(std::chrono::seconds(10));
  return 0;
}

// A run_block, tune, calibrate or trial request: to the delegate, or run here.
void Worker::handle_request(Received& got) {
  if (opt_.delegate)
    delegate(got);
  else if (got.message.tag == Tag::run_block)
    handle_run(got);
  else if (got.message.tag == Tag::trial)
    handle_trial(got);
  else
    handle_work(got);
}

}  // namespace wstune::daemon
