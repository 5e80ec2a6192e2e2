#pragma once
// DeviceRunner's state, shared by its source files (runner.cpp: builds,
// uploads and runs; overlap.cpp: run_overlapped). Internal to libwstune.
#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runner/program_build.hpp"
#include "runner/runner.hpp"
#include "wstune/error.hpp"
#include "wstune/timing.hpp"

namespace wstune {

namespace detail {

// One configuration's program: built once, then reused.
struct Variant : BuiltProgram {
  bool compile_reported = false;  // its compile_ms went to a RunResult
};

// A device buffer the kernel writes: its spec and, for an in-place one, the
// host contents to start (and restart) from.
struct OutputSlot {
  OutputBuffer spec;
  cl::Buffer buffer;
  const HostBuffer* initial = nullptr;  // the caller's input during upload(), then Impl::uploaded_inputs' copy
  std::size_t initial_offset = 0;       // elements: where `initial` sits in the buffer
  // A device copy of `initial` for outputs restored before each run: the
  // restore is a device-side copy instead of a host upload per run (empty
  // when the device had no room for it: then the host copy is written).
  cl::Buffer pristine;
};

// What run_overlapped() enqueues for one chunk, worked out once before
// anything is enqueued.
struct ChunkPlan {
  Variant* variant = nullptr;
  std::vector<InputPlacement> place;  // per input (Impl::placements)
  std::vector<OutputBuffer> outputs;  // KernelSpec::outputs of the chunk
};

// One run_overlapped() call: its chunks, their plans, the inputs they
// share and the events, read once both queues finish.
struct OverlapRun {
  const Problem& p;
  const LocalSize& local;
  const std::vector<OverlapChunk>& chunks;
  unsigned runs = 1;  // kernel runs per chunk
  std::vector<ChunkPlan> plans;
  std::vector<bool> shared;                     // per input: one upload for every chunk
  std::vector<cl::Buffer> shared_buffers;       // per input (set where shared)
  std::vector<cl::Event> uploads;               // every upload, shared inputs first
  std::vector<int> upload_chunk;                // per upload: its chunk (-1: a shared input)
  int chunk = -1;                               // the chunk being enqueued (-1: shared inputs)
  bool own_buffers = false;                     // each chunk's inputs in buffers of its own (resident)
  bool inputs_there = false;                    // those buffers hold this call's inputs already: write none
  std::vector<std::vector<cl::Event>> kernels;  // per chunk and run (chunk-major), KernelSpec::enqueue's events
  std::vector<cl::Event> reads;                 // every read-back
  std::vector<int> read_chunk;                  // per read-back: its chunk
};

}  // namespace detail

struct DeviceRunner::Impl {
  using Variant = detail::Variant;
  using OutputSlot = detail::OutputSlot;

  Device device;
  const KernelSpec* spec;
  std::string extra_options;
  bool warm_builds = false;  // build_program(warm): set in the build pool's builders
  cl::Context context;
  cl::CommandQueue queue;
  std::map<std::string, Variant> variants;  // build options → program
  std::deque<std::string> built_order;      // keys of variants, oldest first (forget_programs())
  const Variant* reference = nullptr;       // the reference parameters' build, once built
  std::vector<cl::Buffer> inputs;
  std::vector<OutputSlot> outputs;
  std::vector<HostBuffer> uploaded_inputs;  // copies of the inputs restored before each run (others empty)
  std::size_t uploaded_bytes = 0;           // bytes the last upload() wrote
  std::vector<ReadTarget> read_targets;     // read_into()
  std::vector<HostBuffer> spare_outputs;    // recycled host buffers for the next read-back
  // Device buffers are kept between uploads and reused while they are big
  // enough: allocating (and, on NVIDIA, first-touch mapping) on every
  // upload costs more than a small kernel.
  std::vector<std::pair<cl::Buffer, std::size_t>> input_pool, output_pool, pristine_pool;  // buffer, bytes
  // run_overlapped(): a second in-order queue (created on first use) and
  // each queue's own kept buffers, apart from upload()'s.
  cl::CommandQueue second_queue;
  std::array<std::vector<std::pair<cl::Buffer, std::size_t>>, 2> lane_input_pool, lane_output_pool;
  std::vector<std::pair<cl::Buffer, std::size_t>> shared_input_pool;  // inputs every chunk shares
  // run_overlapped() with a resident id: each chunk's own input buffers, and
  // the id and chunk blocks they hold ("" = none held).
  std::vector<std::vector<std::pair<cl::Buffer, std::size_t>>> chunk_input_pool;
  std::string resident_chunks_id;
  std::vector<Block> resident_chunks;
  std::string resident_upload_id;     // upload(): the id of the inputs its buffers hold ("" = none)
  std::vector<RunSpan> upload_spans;  // the last upload()'s (run() reports them)
  Samples h2d;
  double h2d_wall_ms = 0;  // wall clock of the last upload()
  Block uploaded{};
  nlohmann::json uploaded_params;
  bool has_upload = false;
  bool outputs_clean = false;  // in-place outputs hold their initial contents (no run since the upload)

  using BuildInput = ProgramSource;

  BuildInput options_for(const Problem& p, bool non_uniform) const {
    return program_source(*spec, p, device.info, non_uniform, extra_options);
  }

  // Whether `local` needs non-uniform work-groups to run `b` (it does not
  // divide the NDRange and the kernel does not guard its bounds).
  bool needs_non_uniform(const Problem& p, const Block& b, const LocalSize& local) const {
    if (!local || spec->guards_bounds() || !device.info.non_uniform_work_groups) return false;
    const Extent g = spec->block_global(p, b);
    for (unsigned d = 0; d < g.dims; ++d)
      if ((*local)[d] && g[d] % (*local)[d]) return true;
    return false;
  }

  // The variant of `in`, compiled (once).
  Variant& build(const BuildInput& in) {
    auto [it, fresh] = variants.try_emplace(in.key());
    if (fresh) {
      built_order.push_back(it->first);
      compile(it->second, in);
    }
    return it->second;
  }

  // Builds one program and its kernel (build_program(): through the program
  // binary cache). Thread-safe for distinct variants.
  void compile(Variant& v, const BuildInput& in) const {
    build_program(context, device.device, *spec, in, v, warm_builds);
  }

  Variant& variant_for(const Problem& p, const Block& b, const LocalSize& local) {
    return build(options_for(p, needs_non_uniform(p, b, local)));
  }

  // A kept device buffer of at least `bytes` (slot `i` of `pool`).
  cl::Buffer pooled(std::vector<std::pair<cl::Buffer, std::size_t>>& pool, std::size_t i, std::size_t bytes,
                    cl_mem_flags flags, const char* call) {
    if (i >= pool.size()) pool.resize(i + 1);
    auto& [buf, cap] = pool[i];
    bytes = std::max<std::size_t>(1, bytes);
    if (!buf() || cap < bytes) {
      cl_int err = CL_SUCCESS;
      buf = cl::Buffer(context, flags, bytes, nullptr, &err);
      check(err, call);
      cap = bytes;
    }
    return buf;
  }

  // Enqueues a non-blocking read of `bytes` from `buffer` at byte `offset`
  // on `q` into `target` (rows at its pitch when target.row_bytes > 0) or,
  // without target data, into `dst`; returns its event. Throws Error when
  // the rows do not fit, ClError.
  static cl::Event enqueue_read(cl::CommandQueue& q, const cl::Buffer& buffer, std::size_t offset, std::size_t bytes,
                                const ReadTarget& target, std::byte* dst);

  // Where each of `b`'s inputs goes on the device (upload() and
  // run_overlapped()): KernelSpec::input_placement, or each compact at
  // offset 0 in a buffer of its own size. Throws Error when the kernel gives
  // a placement per input of another count.
  std::vector<InputPlacement> placements(const Problem& p, const Block& b,
                                         const std::vector<HostBuffer>& block_inputs) const;
  // Elements of the device buffer that holds `host` at `place`.
  static std::size_t buffer_elements(const InputPlacement& place, const HostBuffer& host) {
    return std::max(place.device_count, place.offset + host.size());
  }
  // The status of a run that an OpenCL call failed: constraints for a
  // work-group size the device refused (OpenCL 1.2 §5.8), else runtime.
  static TrialStatus failure_status(const ClError& e) {
    return e.code() == CL_INVALID_WORK_GROUP_SIZE || e.code() == CL_INVALID_WORK_ITEM_SIZE ? TrialStatus::constraints
                                                                                           : TrialStatus::runtime;
  }
  // Gives `v`'s build time to `r` the first time a run uses the build
  // (prebuilt or not); false with status compile and the log when it failed.
  static bool take_build(Variant& v, RunResult& r) {
    if (!v.compile_reported) {
      r.compile_ms += v.info.compile_ms;
      v.compile_reported = true;
    }
    if (v.error.empty()) return true;
    r.status = TrialStatus::compile;
    r.error = v.error;
    return false;
  }

  // run_overlapped()'s steps (overlap.cpp).
  bool plan_chunks(DeviceRunner& self, detail::OverlapRun& run, RunResult& r);
  cl::CommandQueue& lane_queue(std::size_t lane);
  void upload_shared(detail::OverlapRun& run, RunResult& r);
  void keep_resident(detail::OverlapRun& run, const std::string& resident_id);
  void enqueue_chunk(DeviceRunner& self, std::size_t s, detail::OverlapRun& run, RunResult& r);

  std::vector<cl::Event> read_back(bool read_outputs, std::pmr::memory_resource* memory, RunResult& r);

  // Writes every in-place output's initial contents (non-blocking).
  void restore_outputs(bool all, std::vector<cl::Event>* events) {
    for (const auto& o : outputs) {
      if (!o.initial || (!all && !o.spec.restore_each_run)) continue;
      cl::Event ev;
      const std::size_t at = o.initial_offset * o.spec.type.bytes();
      if (!all && o.pristine()) {
        WSTUNE_CL_CHECK(queue.enqueueCopyBuffer(o.pristine, o.buffer, 0, at, o.initial->bytes(), nullptr, &ev));
      } else {
        WSTUNE_CL_CHECK(
            queue.enqueueWriteBuffer(o.buffer, CL_FALSE, at, o.initial->bytes(), o.initial->data(), nullptr, &ev));
      }
      if (events) events->push_back(ev);
      if (all) uploaded_bytes += o.initial->bytes();
    }
  }

  // While the outputs are clean: a device-side copy of the in-place ones'
  // initial contents that later runs restore from (no host traffic per run).
  // On an allocation failure a slot keeps none and its restores write the
  // host copy.
  void keep_pristine() {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      OutputSlot& o = outputs[i];
      if (!o.initial || !o.spec.restore_each_run || o.initial->empty() || o.pristine()) continue;
      try {
        o.pristine = pooled(pristine_pool, i, o.initial->bytes(), CL_MEM_READ_WRITE, "clCreateBuffer(pristine)");
        WSTUNE_CL_CHECK(queue.enqueueCopyBuffer(o.buffer, o.pristine, o.initial_offset * o.spec.type.bytes(), 0,
                                                o.initial->bytes()));
        WSTUNE_CL_CHECK(queue.finish());
      } catch (const ClError&) {
        o.pristine = cl::Buffer();
        pristine_pool[i] = {};
        check_nothrow(clFinish(queue()), "clFinish after a failed pristine copy");
      }
    }
  }
};

}  // namespace wstune
