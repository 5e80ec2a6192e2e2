// The master's run mode: split each job over the workers, send the blocks,
// gather, place and verify the results (docs/daemon.md).
#include "master/master.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "format/json.hpp"
#include "master/router.hpp"
#include "master/timeline.hpp"
#include "protocol/kernel_source.hpp"
#include "search/strategies.hpp"
#include "session/autotune.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/store.hpp"

#include "master/master_util.hpp"

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
                                                                     const Block& block,
                                                                     const std::vector<Block>& chunks,
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
    std::vector<HostBuffer> outs(
        std::make_move_iterator(got.begin() + static_cast<std::ptrdiff_t>(next)),
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

namespace {

// The key of a worker's fixed cost per job: its rank and device (two
// workers of one device model have their own costs), the kernel (and
// source), size, parameters, split direction, local size policy and the
// kernel runs per job.
std::string fixed_cost_key(const WorkerState& w, const KernelSpec& spec, const Problem& p, const Job& job) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", w.rank, w.device->fingerprint(), spec.name(),
                     fnv1a_hex(spec.source()), p.text, p.params.dump(), to_string(job.direction), to_string(job.local),
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
bool got_all_shared(const BlockResult& br, const std::vector<std::pair<Block, std::vector<HostBuffer>>>& pieces) {
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
    note(fmt::format("worker {} could not use its result slot ({}); its results travel as bytes", worker(rank).label(),
                     br.shared_error));
  if (br.shared.empty()) return buffers;
  if (!offered)
    throw ProtocolError(
        fmt::format("block result lists {} output(s) in a result slot, but this job offered none", br.shared.size()));
  std::vector<HostBuffer> outputs(br.shared.size() + buffers.size());
  std::vector<bool> filled(outputs.size(), false);
  for (const SharedOutput& s : br.shared) {
    if (s.index >= outputs.size() || filled[s.index])
      throw ProtocolError(
          fmt::format("block result: shared output {} repeats or lies beyond its {} outputs", s.index, outputs.size()));
    outputs[s.index] = result_memory_.view(rank, s);
    filled[s.index] = true;
  }
  for (std::size_t i = 0, next = 0; i < outputs.size(); ++i)
    if (!filled[i]) outputs[i] = std::move(buffers[next++]);
  return outputs;
}

namespace {
using nlohmann::json;

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
  part.joules = br.joules;
  part.energy_sensor = br.energy_sensor;
  part.energy_note = br.energy_note;
  return part;
}
}  // namespace

// One split of a run job and what came of it: its workers (the plan's
// order), the blocks still out, the answers so far.
struct Master::RunAttempt {
  RunAttempt(const KernelSpec& s, const Problem& pr, const Job& job, std::set<int>& ex)
      : spec(s), p(pr), excluded(ex), runs(job.warmup + job.repetitions), measured(job.split == SplitModel::measured) {}
  const KernelSpec& spec;
  const Problem& p;
  std::set<int>& excluded;                        // workers that failed this job (kept over its attempts)
  unsigned runs;                                  // kernel runs per block: warm-up and timed
  bool measured;                                  // the `measured` split model
  std::vector<SplitWorker> healthy;               // the usable workers not excluded, rank order
  std::vector<std::string> keys;                  // their fixed_cost_key()s (measured only)
  std::set<int> slotted;                          // ranks offered a result slot in this attempt
  std::map<int, Block> pending;                   // blocks sent and not answered, by rank
  std::map<int, BlockAnswer> results;             // answers, by rank
  std::map<int, std::pair<double, double>> sent;  // each send's start and return, ms from t0
  std::map<int, std::vector<HostBuffer>> inputs;  // inputs: master: each rank's run_block buffers
  clock_type::time_point t0{};                    // the first send
  bool failed = false;                            // a worker failed or left: split again
};

// What the master knows of `part`'s clock for its timeline.
PartClock Master::part_clock(const RunAttempt& a, const WorkerPart& part) const {
  const auto sent = a.sent.count(part.rank) ? a.sent.at(part.rank) : std::pair<double, double>{0, 0};
  return PartClock{part.rank,
                   part.device,
                   sent.first,
                   sent.second,
                   part.answer_ms,
                   part.return_ms,
                   !opt_.host.empty() && part.host == opt_.host,
                   std::chrono::duration<double, std::milli>(a.t0.time_since_epoch()).count()};
}

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
    r.status = JobStatus::interrupted;
    r.error = "stop requested";
    return true;
  }
  RunAttempt a(spec, p, r.job, excluded);
  choose_workers(a, r.job);
  if (a.healthy.empty()) {
    r.status = JobStatus::failed;
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
    r.status = JobStatus::interrupted;
    r.error = "stop requested while workers were running";
    return true;
  }
  if (a.failed) return false;
  finish_run(r, a);
  return true;
}

// The local size a worker's block is planned with (SplitWorker::local):
// `local: stored` fixes its stored best for the whole problem (the one it
// then runs where it fits the block, as `wstune split --local stored`
// plans); every other policy, and no stored best, the driver's choice.
LocalSize Master::planning_local(const WorkerState& w, const Job& job, const KernelSpec& spec, const Problem& p) {
  if (job.local != LocalPolicy::stored) return std::nullopt;
  const Extent whole = spec.global_size(p);
  return sink_.stored_local(*w.device, spec, whole, whole).value_or(LocalSize{});
}

// The attempt's workers: the usable ones not excluded, with their planning
// local sizes, calibrations and (measured) their cost keys and learned costs.
void Master::choose_workers(RunAttempt& a, const Job& job) {
  for (const auto& w : workers_) {
    if (!w.usable() || a.excluded.count(w.rank)) continue;
    SplitWorker sw{w.rank, *w.device, a.measured ? sink_.calibration(*w.device, a.spec) : std::nullopt};
    sw.local = planning_local(w, job, a.spec, a.p);
    a.healthy.push_back(std::move(sw));
  }
  if (!a.measured) return;
  a.keys = cost_keys(a.healthy, a.spec, a.p, job);
  costs_.assume(a.healthy, a.keys);
}

// Plans the attempt's split into r.plan; false (the job failed) when the
// model refuses it or the kernel cannot run one of its blocks.
bool Master::plan_attempt(JobReport& r, RunAttempt& a) {
  try {
    const std::vector<Block>* previous = a.measured ? costs_.last_plan(a.keys) : nullptr;
    r.plan = plan_split(r.job.split, r.job.direction, a.spec, a.p, a.healthy, a.runs, previous,
                        a.measured ? costs_.plans_made(a.keys) : 0);
    // A block the kernel cannot run fails the job, naming why (a kernel
    // file without wstune.Split runs only the whole range, as in `wstune split --run`).
    for (const Block& b : r.plan.blocks)
      if (b.size() != 0) (void)a.spec.block_global(a.p, b);
    // Remembered; a left-out worker's cost decays.
    if (a.measured) costs_.planned(a.healthy, a.keys, r.plan.blocks, r.plan.held_by_move);
  } catch (const UsageError& e) {
    r.status = JobStatus::failed;
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
    RunBlock rb{r.id,
                r.attempts,
                r.job.kernel,
                r.size,
                b,
                r.job.local,
                std::nullopt,
                r.job.warmup,
                r.job.repetitions,
                r.job.seed,
                a.p.params,
                packed(r.job),
                r.job.overlap,
                result_slot(r.job, a.healthy[i].rank, a.spec, a.p, b),
                {},
                false};
    if (r.job.local == LocalPolicy::stored) {
      if (auto l = sink_.stored_local(*worker(a.healthy[i].rank).device, a.spec, a.spec.block_global(a.p, b),
                                      a.spec.global_size(a.p)))
        rb.local = *l;
      else
        rb.policy = LocalPolicy::rule;  // nothing stored: the paper's rule
    }
    if (rb.result_slot) a.slotted.insert(a.healthy[i].rank);
    rb.resident = r.job.inputs == "resident";
    if (r.job.inputs == "master")
      a.inputs[a.healthy[i].rank] = sent_inputs(r, a, a.healthy[i].rank, rb);
    else  // the worker's own inputs take the place of what the master sent it whole
      sent_whole_.erase(a.healthy[i].rank);
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
    const int rank = a.healthy[i].rank;
    a.pending[rank] = messages[k].block;
    const double from = ms_since(a.t0);
    comm_.send(rank, messages[k].to_message(std::move(a.inputs[rank])));
    a.sent[rank] = {from, ms_since(a.t0)};
    ++k;
  }
}

// The problem's inputs for `inputs: master` jobs, generated once per
// problem and seed (outside the makespan, as the reference's are).
const std::vector<HostBuffer>& Master::problem_inputs(const KernelSpec& spec, const Problem& p, std::uint64_t seed) {
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}", spec.name(), fnv1a_hex(spec.source()), p.text, p.params.dump(), seed);
  if (master_inputs_.first != key) {
    master_inputs_ = {};
    sent_whole_.clear();
    master_inputs_ = {key, spec.generate_inputs(p, seed)};
  }
  return master_inputs_.second;
}

// `rb`'s inputs for `inputs: master` (RunBlock::sent_inputs) and the
// buffers to send with it: the block's slice of each input (views of the
// master's, no copy), or the whole input when the block needs all of it
// (or a slice that is not a view of it) — sent to a rank once per problem
// and seed, then taken as held.
std::vector<HostBuffer> Master::sent_inputs(const JobReport& r, const RunAttempt& a, int rank, RunBlock& rb) {
  const auto& whole = problem_inputs(a.spec, a.p, r.job.seed);
  const auto views = a.spec.block_inputs(a.p, whole, rb.block);
  std::vector<HostBuffer> buffers;
  for (std::size_t j = 0; j < whole.size(); ++j) {
    SentInput in{j, std::string(whole[j].type().name()), whole[j].size(), 0, std::nullopt};
    const HostBuffer& v = views.at(j);
    const std::byte* lo = whole[j].data();
    const bool inside = v.data() >= lo && v.data() + v.bytes() <= lo + whole[j].bytes() && !v.empty();
    const bool all = !inside || v.size() == whole[j].size();
    if (all && sent_whole_[rank].count(j)) {  // held since an earlier job
      rb.sent_inputs.push_back(std::move(in));
      continue;
    }
    in.buffer = buffers.size();
    if (all) {
      buffers.push_back(whole[j].view());
      sent_whole_[rank].insert(j);
    } else {
      in.offset = static_cast<std::size_t>(v.data() - lo) / whole[j].type().bytes();
      buffers.push_back(whole[j].view(in.offset, v.size()));
    }
    rb.sent_inputs.push_back(std::move(in));
  }
  return buffers;
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
      leave_out(r, a, src,
                fmt::format("worker {} failed job {} ({}): {}", worker(src).label(), r.id, wstune::to_string(e.status),
                            e.text));
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
  sent_whole_.erase(rank);  // it may have lost what it held (a new isolated process)
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
  json timeline = json::array();
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
    if (opt_.timeline) timeline.push_back(part_timeline(part_clock(a, part), br));
    r.parts.push_back(std::move(part));
  }
  r.overhead_ms = r.makespan_ms - slowest;
  if (opt_.timeline) {
    r.timeline = json{{"job", r.id},
                      {"kernel", r.job.kernel},
                      {"size", r.size},
                      {"inputs", r.job.inputs},
                      {"overlap", r.job.overlap},
                      {"makespan_ms", r.makespan_ms},
                      {"workers", timeline},
                      {"critical_path", critical_path(timeline)}};
  }
  const auto v0 = clock_type::now();
  a.spec.finish(a.p, placed, full);
  r.verdict = a.spec.verify(a.p, full, reference(a.spec, a.p, r.job.seed));
  r.verify_ms = ms_since(v0);
  if (!r.verdict.ok) {
    r.status = JobStatus::failed;
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
  sent_whole_.erase(rank);
  r.faults.push_back(mark_late(r, rank));
  note(r.faults.back());
}

const std::vector<HostBuffer>& Master::reference(const KernelSpec& spec, const Problem& p, std::uint64_t seed) {
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}", spec.name(), fnv1a_hex(spec.source()), p.text, p.params.dump(), seed);
  for (const auto& [k, ref] : references_)
    if (k == key) return ref;
  if (references_.size() >= 2) references_.erase(references_.begin());
  references_.emplace_back(key, spec.reference(p, spec.generate_inputs(p, seed)));
  return references_.back().second;
}

}  // namespace wstune::daemon
