// DeviceRunner::run_overlapped(): a block as sub-blocks over two in-order
// queues, so one sub-block's transfers overlap another's kernel (issue 18).
#include <chrono>
#include <numeric>

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/runner.hpp"
#include "wstune/timing.hpp"

#include "runner/impl.hpp"

namespace wstune {

using detail::Variant;

namespace {

// Where each of chunk c's inputs goes on the device: KernelSpec::input_placement,
// or each compact at offset 0 in a buffer of its own size. Throws Error
// when the kernel gives a placement per input of another count.
std::vector<InputPlacement> placements(const KernelSpec& k, const Problem& p, const OverlapChunk& c) {
  std::vector<InputPlacement> place = k.input_placement(p, c.block);
  if (place.empty())
    for (const auto& h : c.inputs) place.push_back(InputPlacement{0, h.size()});
  if (place.size() != c.inputs.size())
    throw Error(fmt::format("{}: {} input placements for {} inputs", k.name(), place.size(), c.inputs.size()));
  return place;
}

// Inputs every chunk shares: the same host bytes (address, type, size)
// placed the same way. With one chunk there is nothing to share.
std::vector<bool> shared_inputs(const KernelSpec& k, const Problem& p, const std::vector<OverlapChunk>& chunks) {
  const auto& first = chunks.front();
  const auto place0 = placements(k, p, first);
  std::vector<bool> shared(first.inputs.size(), chunks.size() > 1);
  for (const auto& o : k.outputs(p, first.block))  // an in-place output's input is each chunk's own
    if (o.from_input) shared.at(*o.from_input) = false;
  for (std::size_t s = 1; s < chunks.size(); ++s) {
    const auto place = placements(k, p, chunks[s]);
    for (std::size_t j = 0; j < shared.size(); ++j) {
      const HostBuffer& a = first.inputs[j];
      const HostBuffer& b = chunks[s].inputs.at(j);
      shared[j] = shared[j] && a.data() == b.data() && a.size() == b.size() && a.type() == b.type() &&
                  place0[j].offset == place[j].offset && place0[j].device_count == place[j].device_count;
    }
  }
  return shared;
}

// "[begin, end) along x|y" for messages.
std::string block_text(const Block& b) { return fmt::format("[{}, {}) along {}", b.begin, b.end, b.dim ? 'y' : 'x'); }

double added_ms(const std::vector<cl::Event>& events) {
  return std::accumulate(events.begin(), events.end(), 0.0,
                         [](double sum, const cl::Event& e) { return sum + event_span_ms(e, e); });
}

}  // namespace

// Builds and checks every chunk's configuration; false with r's status and
// error set when one cannot run (compile, constraints) or cannot be split
// (runtime: a missing or mis-sized target).
bool DeviceRunner::Impl::check_chunks(DeviceRunner& self, const Problem& p, const std::vector<OverlapChunk>& chunks, const LocalSize& local,
                                      std::vector<Variant*>& variants, RunResult& r) {
  auto fail = [&](TrialStatus status, std::string why) {
    r.status = status;
    r.error = std::move(why);
    return false;
  };
  if (chunks.empty()) return fail(TrialStatus::runtime, "run_overlapped: no chunks");
  for (const auto& c : chunks) {
    Variant& v = variant_for(p, c.block, local);
    if (!v.compile_reported) {
      r.compile_ms += v.info.compile_ms;
      v.compile_reported = true;
    }
    if (!v.error.empty()) return fail(TrialStatus::compile, v.error);
    // check_local() is the public face of the same checks.
    if (std::string why = self.check_local(p, c.block, local); !why.empty())
      return fail(TrialStatus::constraints, fmt::format("chunk {}: {}", block_text(c.block), why));
    const auto outs = spec->outputs(p, c.block);
    if (c.targets.size() != outs.size())
      return fail(TrialStatus::runtime, fmt::format("chunk {}: {} read targets for {} outputs", block_text(c.block),
                                                    c.targets.size(), outs.size()));
    for (std::size_t o = 0; o < outs.size(); ++o) {
      const std::size_t bytes = outs[o].read_count * outs[o].type.bytes();
      if ((bytes && !c.targets[o].data) || c.targets[o].bytes != bytes)
        return fail(TrialStatus::runtime, fmt::format("chunk {}: the read target of output {} holds {} bytes, the "
                                                      "read-back {}", block_text(c.block), o, c.targets[o].bytes,
                                                      bytes));
    }
    variants.push_back(&v);
  }
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
std::vector<cl::Buffer> DeviceRunner::Impl::upload_shared(const OverlapChunk& first,
                                                          const std::vector<InputPlacement>& place,
                                                          const std::vector<bool>& shared, detail::OverlapEvents& ev,
                                                          RunResult& r) {
  std::vector<cl::Buffer> buffers(shared.size());
  const std::size_t before = ev.uploads.size();
  for (std::size_t j = 0; j < shared.size(); ++j) {
    if (!shared[j]) continue;
    const HostBuffer& host = first.inputs[j];
    const std::size_t eb = host.type().bytes();
    buffers[j] = pooled(shared_input_pool, j, std::max(place[j].device_count, place[j].offset + host.size()) * eb,
                        CL_MEM_READ_ONLY, "clCreateBuffer(shared input)");
    if (host.empty()) continue;
    cl::Event e;
    WSTUNE_CL_CHECK(queue.enqueueWriteBuffer(buffers[j], CL_FALSE, place[j].offset * eb, host.bytes(), host.data(),
                                             nullptr, &e));
    ev.uploads.push_back(e);
    r.h2d_bytes += host.bytes();
  }
  if (ev.uploads.size() > before) {
    // The first queue is flushed before the second waits on its events
    // (OpenCL 1.2 §5.13: events of another queue need their commands submitted).
    WSTUNE_CL_CHECK(queue.flush());
    const std::vector<cl::Event> wait(ev.uploads.begin() + static_cast<std::ptrdiff_t>(before), ev.uploads.end());
    WSTUNE_CL_CHECK(lane_queue(1).enqueueBarrierWithWaitList(&wait));
  }
  return buffers;
}

// Enqueues a non-blocking write of `host` into `buffer` at its placement.
static void write_input(cl::CommandQueue& q, const cl::Buffer& buffer, const InputPlacement& place, const HostBuffer& host,
                 detail::OverlapEvents& ev, RunResult& r) {
  if (host.empty()) return;
  cl::Event e;
  WSTUNE_CL_CHECK(q.enqueueWriteBuffer(buffer, CL_FALSE, place.offset * host.type().bytes(), host.bytes(), host.data(),
                                       nullptr, &e));
  ev.uploads.push_back(e);
  r.h2d_bytes += host.bytes();
}

// Enqueues one chunk on queue `lane`: its own inputs into the lane's
// buffers, an in-place output's initial contents into its output buffer,
// its kernel(s), its read-backs to the targets. The queue is in order, so
// the lane's buffers are free again for its next chunk.
void DeviceRunner::Impl::enqueue_chunk(DeviceRunner& self, std::size_t lane, const Problem& p, const OverlapChunk& c,
                                       Variant& v, const LocalSize& local, const std::vector<bool>& shared,
                                       const std::vector<cl::Buffer>& shared_buffers, detail::OverlapEvents& ev,
                                       RunResult& r) {
  cl::CommandQueue& q = lane_queue(lane);
  const auto place = placements(*spec, p, c);
  const auto outs = spec->outputs(p, c.block);
  auto elements = [&](std::size_t j, std::size_t count) { return std::max(count, place[j].offset + c.inputs[j].size()); };
  std::vector<cl::Buffer> out_buffers;
  std::vector<bool> in_place(c.inputs.size(), false);
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const auto j = outs[o].from_input;
    out_buffers.push_back(pooled(lane_output_pool[lane], o,
                                 (j ? elements(*j, outs[o].device_count) : outs[o].device_count) * outs[o].type.bytes(),
                                 CL_MEM_READ_WRITE, "clCreateBuffer(chunk output)"));
    if (!j) continue;
    in_place.at(*j) = true;
    write_input(q, out_buffers.back(), place[*j], c.inputs[*j], ev, r);  // the output starts as this input
  }
  std::vector<cl::Buffer> ins;
  for (std::size_t j = 0; j < c.inputs.size(); ++j) {
    if (in_place[j]) continue;
    if (shared[j]) {
      ins.push_back(shared_buffers[j]);
      continue;
    }
    const std::size_t eb = c.inputs[j].type().bytes();
    ins.push_back(pooled(lane_input_pool[lane], j, elements(j, place[j].device_count) * eb, CL_MEM_READ_ONLY,
                         "clCreateBuffer(chunk input)"));
    write_input(q, ins.back(), place[j], c.inputs[j], ev, r);
  }
  const Extent global = self.launch_global(p, c.block, local);
  ev.kernels.push_back(spec->enqueue(q, v.kernel, p, c.block, ins, out_buffers, local, global));
  r.global = global;  // the last chunk's
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const std::size_t eb = outs[o].type.bytes(), bytes = outs[o].read_count * eb;
    if (bytes == 0) continue;
    ev.reads.push_back(enqueue_read(q, out_buffers[o], outs[o].read_offset * eb, bytes, c.targets[o], nullptr));
    r.d2h_bytes += bytes;
  }
}

RunResult DeviceRunner::run_overlapped(const Problem& p, const std::vector<OverlapChunk>& chunks,
                                       const LocalSize& local) {
  auto& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.local = local;
  std::vector<Variant*> variants;
  try {
    if (!m.check_chunks(*this, p, chunks, local, variants, r)) {
      r.wall_ms = ms_since(t0);
      return r;
    }
    detail::OverlapEvents ev;
    const std::vector<bool> shared = shared_inputs(*m.spec, p, chunks);
    const auto shared_buffers = m.upload_shared(chunks.front(), placements(*m.spec, p, chunks.front()), shared, ev, r);
    for (std::size_t s = 0; s < chunks.size(); ++s) {
      m.enqueue_chunk(*this, s % 2, p, chunks[s], *variants[s], local, shared, shared_buffers, ev, r);
      WSTUNE_CL_CHECK(m.lane_queue(s % 2).flush());  // submitted now, so the other queue's work overlaps it
    }
    WSTUNE_CL_CHECK(m.queue.finish());
    if (m.second_queue()) WSTUNE_CL_CHECK(m.second_queue.finish());
    double kernel_ms = 0;
    for (const auto& k : ev.kernels)
      if (!k.empty()) kernel_ms += event_span_ms(k.front(), k.back());
    r.kernel.ms.push_back(kernel_ms);
    if (!ev.uploads.empty()) r.h2d.ms.push_back(added_ms(ev.uploads));
    if (!ev.reads.empty()) r.d2h.ms.push_back(added_ms(ev.reads));
  } catch (const ClError& e) {
    r.status = e.code() == CL_INVALID_WORK_GROUP_SIZE || e.code() == CL_INVALID_WORK_ITEM_SIZE
                   ? TrialStatus::constraints : TrialStatus::runtime;
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
