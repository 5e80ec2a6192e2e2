// DeviceRunner::run_overlapped(): a block as sub-blocks over two in-order
// queues, so one sub-block's transfers overlap another's kernel (issue 18).
#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "runner/runner.hpp"
#include "wstune/error.hpp"
#include "wstune/timing.hpp"

#include "runner/impl.hpp"
#include "runner/spans.hpp"

namespace wstune {

using detail::OverlapRun;

namespace {

// Inputs every chunk shares: the same host bytes (address, type, size)
// placed the same way, and no in-place output's (each chunk's own). With
// one chunk there is nothing to share.
std::vector<bool> shared_inputs(const OverlapRun& run) {
  const OverlapChunk& first = run.chunks.front();
  const auto& place0 = run.plans.front().place;
  std::vector<bool> shared(first.inputs.size(), run.chunks.size() > 1);
  for (const auto& o : run.plans.front().outputs)
    if (o.from_input) shared.at(*o.from_input) = false;
  for (std::size_t s = 1; s < run.chunks.size(); ++s) {
    const auto& place = run.plans[s].place;
    for (std::size_t j = 0; j < shared.size(); ++j) {
      const HostBuffer& a = first.inputs[j];
      const HostBuffer& b = run.chunks[s].inputs.at(j);
      shared[j] = shared[j] && a.data() == b.data() && a.size() == b.size() && a.type() == b.type() &&
                  place0[j].offset == place[j].offset && place0[j].device_count == place[j].device_count;
    }
  }
  return shared;
}

// "[begin, end) along x|y" for messages.
std::string block_text(const Block& b) {
  return fmt::format("[{}, {}) along {}", b.begin, b.end, b.dim ? 'y' : 'x');
}

double added_ms(const std::vector<cl::Event>& events) {
  return std::accumulate(events.begin(), events.end(), 0.0,
                         [](double sum, const cl::Event& e) { return sum + event_span_ms(e, e); });
}

// Enqueues a non-blocking write of `host` into `buffer` at its placement.
void write_input(cl::CommandQueue& q, const cl::Buffer& buffer, const InputPlacement& place, const HostBuffer& host,
                 OverlapRun& run, RunResult& r) {
  if (host.empty()) return;
  cl::Event e;
  WSTUNE_CL_CHECK(q.enqueueWriteBuffer(buffer, CL_FALSE, place.offset * host.type().bytes(), host.bytes(), host.data(),
                                       nullptr, &e));
  run.uploads.push_back(e);
  run.upload_chunk.push_back(run.chunk);
  r.h2d_bytes += host.bytes();
}

// The spans of a finished run (RunResult::spans): per chunk (and the shared
// inputs, chunk -1) one upload from its first write's start to its last's
// end, one kernel per run, one download.
std::vector<RunSpan> run_spans(const OverlapRun& run, detail::EventClock& clock) {
  for (const auto& e : run.uploads) clock.anchor(e);
  for (const auto& k : run.kernels)
    if (!k.empty()) clock.anchor(k.front());
  for (const auto& e : run.reads) clock.anchor(e);
  std::vector<RunSpan> spans;
  if (!clock.anchored()) return spans;
  const auto merged = [&](const char* what, const std::vector<cl::Event>& events, const std::vector<int>& chunks) {
    for (int c = -1; c < static_cast<int>(run.chunks.size()); ++c) {
      std::optional<RunSpan> span;
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (chunks[i] != c) continue;
        const RunSpan one = clock.span(what, c, events[i], events[i]);
        if (!span) span = one;
        span->start_ms = std::min(span->start_ms, one.start_ms);
        span->end_ms = std::max(span->end_ms, one.end_ms);
      }
      if (span) spans.push_back(*span);
    }
  };
  merged("upload", run.uploads, run.upload_chunk);
  for (std::size_t i = 0; i < run.kernels.size(); ++i)
    if (const auto& k = run.kernels[i]; !k.empty())
      spans.push_back(clock.span("kernel", static_cast<int>(i / run.runs), k.front(), k.back()));
  merged("download", run.reads, run.read_chunk);
  return spans;
}

}  // namespace

// Builds and checks every chunk's configuration and works out its plan;
// false with r's status and error set when one cannot run (compile,
// constraints) or cannot be split (runtime: a missing or mis-sized target).
bool DeviceRunner::Impl::plan_chunks(DeviceRunner& self, OverlapRun& run, RunResult& r) {
  auto fail = [&](TrialStatus status, std::string why) {
    r.status = status;
    r.error = std::move(why);
    return false;
  };
  if (run.chunks.empty()) return fail(TrialStatus::runtime, "run_overlapped: no chunks");
  for (const auto& c : run.chunks) {
    Variant& v = variant_for(run.p, c.block, run.local);
    if (!take_build(v, r)) return false;
    // check_local() is the public face of the same checks.
    if (std::string why = self.check_local(run.p, c.block, run.local); !why.empty())
      return fail(TrialStatus::constraints, fmt::format("chunk {}: {}", block_text(c.block), why));
    detail::ChunkPlan plan{&v, placements(run.p, c.block, c.inputs), spec->outputs(run.p, c.block)};
    if (c.targets.size() != plan.outputs.size())
      return fail(TrialStatus::runtime, fmt::format("chunk {}: {} read targets for {} outputs", block_text(c.block),
                                                    c.targets.size(), plan.outputs.size()));
    for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
      const std::size_t bytes = plan.outputs[o].read_count * plan.outputs[o].type.bytes();
      if ((bytes && !c.targets[o].data) || c.targets[o].bytes != bytes)
        return fail(TrialStatus::runtime, fmt::format("chunk {}: the read target of output {} holds {} bytes, the "
                                                      "read-back {}",
                                                      block_text(c.block), o, c.targets[o].bytes, bytes));
    }
    run.plans.push_back(std::move(plan));
  }
  run.shared = shared_inputs(run);
  return true;
}

cl::CommandQueue& DeviceRunner::Impl::lane_queue(std::size_t lane) {
  if (lane == 0) return queue;
  if (!second_queue()) {
    cl_int err = CL_SUCCESS;
    second_queue = cl::CommandQueue(context, device.device, CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE) for overlapped runs");
  }
  return second_queue;
}

// Uploads the shared inputs on the first queue; the second waits for them.
void DeviceRunner::Impl::upload_shared(OverlapRun& run, RunResult& r) {
  const OverlapChunk& first = run.chunks.front();
  const auto& place = run.plans.front().place;
  run.shared_buffers.assign(run.shared.size(), cl::Buffer());
  for (std::size_t j = 0; j < run.shared.size(); ++j) {
    if (!run.shared[j]) continue;
    const HostBuffer& host = first.inputs[j];
    run.shared_buffers[j] = pooled(shared_input_pool, j, buffer_elements(place[j], host) * host.type().bytes(),
                                   CL_MEM_READ_ONLY, "clCreateBuffer(shared input)");
    if (!run.inputs_there) write_input(queue, run.shared_buffers[j], place[j], host, run, r);
  }
  if (run.uploads.empty()) return;
  // The first queue is flushed before the second waits on its events
  // (OpenCL 1.2 §5.13: events of another queue need their commands submitted).
  WSTUNE_CL_CHECK(queue.flush());
  WSTUNE_CL_CHECK(lane_queue(1).enqueueBarrierWithWaitList(&run.uploads));
}

// Enqueues chunk s on queue s mod 2: its own inputs into the queue's
// buffers, an in-place output's initial contents into its output buffer,
// its kernel(s), its read-backs to the targets. The queue is in order, so
// its buffers are free again for its next chunk.
void DeviceRunner::Impl::enqueue_chunk(DeviceRunner& self, std::size_t s, OverlapRun& run, RunResult& r) {
  const std::size_t lane = s % 2;
  cl::CommandQueue& q = lane_queue(lane);
  const OverlapChunk& c = run.chunks[s];
  const detail::ChunkPlan& plan = run.plans[s];
  run.chunk = static_cast<int>(s);
  if (run.own_buffers && chunk_input_pool.size() <= s) chunk_input_pool.resize(s + 1);
  auto& input_pool = run.own_buffers ? chunk_input_pool[s] : lane_input_pool[lane];
  std::vector<cl::Buffer> out_buffers;
  std::vector<bool> in_place(c.inputs.size(), false);
  for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
    const OutputBuffer& out = plan.outputs[o];
    const auto j = out.from_input;
    const std::size_t elements = j ? buffer_elements(plan.place[*j], c.inputs[*j]) : 0;
    out_buffers.push_back(pooled(lane_output_pool[lane], o, std::max(elements, out.device_count) * out.type.bytes(),
                                 CL_MEM_READ_WRITE, "clCreateBuffer(chunk output)"));
    if (!j) continue;
    in_place.at(*j) = true;
    write_input(q, out_buffers.back(), plan.place[*j], c.inputs[*j], run, r);  // the output starts as this input
  }
  std::vector<cl::Buffer> ins;
  for (std::size_t j = 0; j < c.inputs.size(); ++j) {
    if (in_place[j]) continue;
    if (run.shared[j]) {
      ins.push_back(run.shared_buffers[j]);
      continue;
    }
    ins.push_back(pooled(input_pool, j, buffer_elements(plan.place[j], c.inputs[j]) * c.inputs[j].type().bytes(),
                         CL_MEM_READ_ONLY, "clCreateBuffer(chunk input)"));
    if (!run.inputs_there) write_input(q, ins.back(), plan.place[j], c.inputs[j], run, r);
  }
  r.global = self.launch_global(run.p, c.block, run.local);  // the last chunk's stays
  for (unsigned k = 0; k < run.runs; ++k) {
    for (std::size_t o = 0; k > 0 && o < plan.outputs.size(); ++o)  // each run starts from the same inputs
      if (const auto j = plan.outputs[o].from_input; j && plan.outputs[o].restore_each_run)
        write_input(q, out_buffers[o], plan.place[*j], c.inputs[*j], run, r);
    run.kernels.push_back(
        spec->enqueue(q, plan.variant->kernel, run.p, c.block, ins, out_buffers, run.local, r.global));
  }
  for (std::size_t o = 0; o < plan.outputs.size(); ++o) {
    const OutputBuffer& out = plan.outputs[o];
    const std::size_t eb = out.type.bytes(), bytes = out.read_count * eb;
    if (bytes == 0) continue;
    run.reads.push_back(enqueue_read(q, out_buffers[o], out.read_offset * eb, bytes, c.targets[o], nullptr));
    run.read_chunk.push_back(run.chunk);
    r.d2h_bytes += bytes;
  }
  WSTUNE_CL_CHECK(q.flush());  // submitted now, so the other queue's work overlaps it
}

// Whether the chunks' inputs stay in buffers of their own (a resident id and
// no in-place output) and whether those hold them already; records what
// they will hold.
void DeviceRunner::Impl::keep_resident(OverlapRun& run, const std::string& resident_id) {
  bool in_place = false;
  for (const auto& plan : run.plans)
    for (const auto& o : plan.outputs) in_place = in_place || o.from_input.has_value();
  std::vector<Block> blocks;
  for (const auto& c : run.chunks) blocks.push_back(c.block);
  run.own_buffers = !resident_id.empty() && !in_place;
  run.inputs_there = run.own_buffers && resident_id == resident_chunks_id && blocks == resident_chunks;
  resident_chunks_id = run.own_buffers ? resident_id : std::string();
  resident_chunks = std::move(blocks);
}

RunResult DeviceRunner::run_overlapped(const Problem& p, const std::vector<OverlapChunk>& chunks,
                                       const LocalSize& local, unsigned runs, const std::string& resident_id) {
  auto& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.local = local;
  OverlapRun run{p, local, chunks, std::max(1u, runs), {}, {}, {}, {}, {}, -1, false, false, {}, {}, {}};
  detail::EventClock clock;
  try {
    if (!m.plan_chunks(*this, run, r)) {
      r.wall_ms = ms_since(t0);
      return r;
    }
    m.keep_resident(run, resident_id);
    const std::string held = m.resident_chunks_id;
    m.resident_chunks_id.clear();  // until this run completes
    clock.start();
    m.upload_shared(run, r);
    for (std::size_t s = 0; s < chunks.size(); ++s) m.enqueue_chunk(*this, s, run, r);
    WSTUNE_CL_CHECK(m.queue.finish());
    if (m.second_queue()) WSTUNE_CL_CHECK(m.second_queue.finish());
    r.kernel.ms.assign(run.runs, 0.0);
    for (std::size_t i = 0; i < run.kernels.size(); ++i)
      if (const auto& k = run.kernels[i]; !k.empty()) r.kernel.ms[i % run.runs] += event_span_ms(k.front(), k.back());
    if (!run.uploads.empty()) r.h2d.ms.push_back(added_ms(run.uploads));
    if (!run.reads.empty()) r.d2h.ms.push_back(added_ms(run.reads));
    r.spans = run_spans(run, clock);
    m.resident_chunks_id = held;
  } catch (const ClError& e) {
    r.status = Impl::failure_status(e);
    r.error = e.what();
  } catch (const std::exception& e) {
    r.status = TrialStatus::runtime;
    r.error = e.what();
  }
  if (!r.ok()) {  // drain what a failed enqueue left behind, ignoring errors
    for (const cl::CommandQueue* q : {&m.queue, &m.second_queue})
      if ((*q)()) check_nothrow(clFinish((*q)()), "clFinish after a failed overlapped run");
  }
  r.wall_ms = ms_since(t0);
  return r;
}

}  // namespace wstune
