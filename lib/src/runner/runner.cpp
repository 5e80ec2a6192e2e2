#include "runner/runner.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "space/search_space.hpp"
#include "wstune/error.hpp"

#include "runner/impl.hpp"
#include "runner/spans.hpp"
#include "runner/timing_lock.hpp"

namespace wstune {

using detail::OutputSlot;
using detail::Variant;

cl::Event DeviceRunner::Impl::enqueue_read(cl::CommandQueue& q, const cl::Buffer& buffer, std::size_t offset,
                                           std::size_t bytes, const ReadTarget& target, std::byte* dst) {
  cl::Event ev;
  if (target.data && target.row_bytes) {
    if (bytes % target.row_bytes || target.pitch_bytes < target.row_bytes)
      throw Error(fmt::format("read target: rows of {} bytes at a pitch of {} do not fit {} bytes", target.row_bytes,
                              target.pitch_bytes, bytes));
    WSTUNE_CL_CHECK(q.enqueueReadBufferRect(buffer, CL_FALSE, {offset, 0, 0}, {0, 0, 0},
                                            {target.row_bytes, bytes / target.row_bytes, 1}, target.row_bytes, 0,
                                            target.pitch_bytes, 0, target.data, nullptr, &ev));
  } else {
    WSTUNE_CL_CHECK(
        q.enqueueReadBuffer(buffer, CL_FALSE, offset, bytes, target.data ? target.data : dst, nullptr, &ev));
  }
  return ev;
}

// Enqueues the outputs' read-backs (non-blocking) into read targets,
// recycled buffers of the right shape (without `memory`) or new (unzeroed)
// RunResult::outputs from `memory` (null: the heap); returns their events. Throws Error for a target of
// the wrong size.
std::vector<cl::Event> DeviceRunner::Impl::read_back(bool read_outputs, std::pmr::memory_resource* memory,
                                                     RunResult& r) {
  auto& m = *this;
  std::vector<cl::Event> reads;
  for (std::size_t k = 0; k < m.outputs.size(); ++k) {
    const auto& o = m.outputs[k];
    const std::size_t n = read_outputs ? o.spec.read_count : 0;
    const ReadTarget target = k < m.read_targets.size() ? m.read_targets[k] : ReadTarget{};
    std::byte* dst = target.data;
    if (dst && target.bytes != n * o.spec.type.bytes()) {
      throw Error(fmt::format("read target of output {} holds {} bytes, the read-back {}", k, target.bytes,
                              n * o.spec.type.bytes()));
    }
    if (dst || n == 0) {
      r.outputs.emplace_back(o.spec.type, 0);
    } else if (!memory && k < m.spare_outputs.size() && m.spare_outputs[k].type() == o.spec.type &&
               m.spare_outputs[k].size() == n) {
      r.outputs.push_back(std::move(m.spare_outputs[k]));
    } else {
      r.outputs.push_back(HostBuffer::uninitialized(o.spec.type, n, memory));  // the read fills it
    }
    if (n == 0) continue;
    const std::size_t offset = o.spec.read_offset * o.spec.type.bytes(), bytes = n * o.spec.type.bytes();
    const cl::Event ev = enqueue_read(m.queue, o.buffer, offset, bytes, target, r.outputs.back().data());
    reads.push_back(ev);
    r.d2h_bytes += n * o.spec.type.bytes();
  }
  return reads;
}

DeviceRunner::DeviceRunner(Device device, const KernelSpec& spec, std::string extra_build_options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.device = std::move(device);
  m.spec = &spec;
  m.extra_options = std::move(extra_build_options);
  cl_int err = CL_SUCCESS;
  m.context = cl::Context(m.device.device, nullptr, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  m.queue = cl::CommandQueue(m.context, m.device.device, CL_QUEUE_PROFILING_ENABLE, &err);
  check(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");
  if (!spec.tuning_parameters().empty()) return;
  Problem none;
  const Variant& v = m.build(m.options_for(none, false));
  if (!v.error.empty()) {
    if (v.code != CL_SUCCESS) throw BuildError(v.call, v.code, v.log);
    throw Error(v.error);
  }
  m.reference = &v;
}

DeviceRunner::~DeviceRunner() {
  if (!impl_) return;
  for (const cl::CommandQueue* q : {&impl_->queue, &impl_->second_queue})
    check_nothrow((*q)() ? clFinish((*q)()) : CL_SUCCESS, "clFinish in ~DeviceRunner");
}

const Device& DeviceRunner::device() const noexcept {
  return impl_->device;
}
const KernelSpec& DeviceRunner::spec() const noexcept {
  return *impl_->spec;
}
const cl::Context& DeviceRunner::context() const noexcept {
  return impl_->context;
}
void DeviceRunner::read_into(std::vector<ReadTarget> targets) {
  impl_->read_targets = std::move(targets);
}
std::size_t DeviceRunner::kernel_work_group_size() const noexcept {
  return impl_->reference ? impl_->reference->info.work_group_size : 0;
}
std::size_t DeviceRunner::max_local_items() const noexcept {
  const std::size_t k = kernel_work_group_size();
  return k ? std::min(k, impl_->device.info.max_work_group_size) : impl_->device.info.max_work_group_size;
}
std::uint64_t DeviceRunner::kernel_local_mem_bytes() const noexcept {
  return impl_->reference ? impl_->reference->info.local_mem_bytes : 0;
}
double DeviceRunner::compiled_ms() const noexcept {
  double ms = 0;
  for (const auto& [options, v] : impl_->variants) ms += v.info.compile_ms;
  return ms;
}

const KernelVariantInfo* DeviceRunner::variant(const Problem& p, std::string* error) {
  const Variant& v = impl_->build(impl_->options_for(p, false));
  if (!v.error.empty()) {
    if (error) *error = v.error;
    return nullptr;
  }
  if (!impl_->reference && p.params == impl_->spec->reference_params()) impl_->reference = &v;
  return &v.info;
}

bool DeviceRunner::precompile(const Problem& p, std::string* error) noexcept {
  Variant v;
  try {
    impl_->compile(v, impl_->options_for(p, false));
  } catch (const std::exception& e) {
    v.error = e.what();
  }
  if (error) *error = v.error;
  return v.error.empty();
}

void DeviceRunner::forget_programs(std::size_t keep) noexcept {
  auto& m = *impl_;
  while (m.variants.size() > keep && !m.built_order.empty()) {
    const auto it = m.variants.find(m.built_order.front());
    m.built_order.pop_front();
    if (it != m.variants.end() && &it->second != m.reference) m.variants.erase(it);
  }
}

void DeviceRunner::warm_builds(bool on) noexcept {
  impl_->warm_builds = on;
}

void DeviceRunner::recycle(std::vector<HostBuffer>&& outputs) {
  impl_->spare_outputs = std::move(outputs);
}

void DeviceRunner::prebuild(const std::vector<Problem>& problems, unsigned threads) {
  auto& m = *impl_;
  std::vector<std::pair<Variant*, Impl::BuildInput>> todo;
  for (const Problem& p : problems) {
    Impl::BuildInput in = m.options_for(p, false);
    auto [it, fresh] = m.variants.try_emplace(in.key());
    if (!fresh) continue;
    m.built_order.push_back(it->first);
    todo.emplace_back(&it->second, std::move(in));
  }
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  std::atomic<std::size_t> next{0};
  std::vector<std::string> failures(todo.size());
  auto work = [&] {
    for (std::size_t i; (i = next++) < todo.size();) {
      try {
        m.compile(*todo[i].first, todo[i].second);
      } catch (const std::exception& e) {  // an OpenCL failure outside the build itself
        todo[i].first->error = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, todo.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

Extent DeviceRunner::launch_global(const Problem& p, const Block& b, const LocalSize& local) const {
  const Extent g = impl_->spec->block_global(p, b);
  if (!local || !impl_->spec->guards_bounds() || impl_->needs_non_uniform(p, b, local)) return g;
  return round_up(g, *local);
}

std::string DeviceRunner::check_local(const Problem& p, const Block& b, const LocalSize& local, bool kernel_limit) {
  auto& m = *impl_;
  const Variant& v = m.variant_for(p, b, local);
  if (!v.error.empty()) return v.error;
  const auto& info = m.device.info;
  if (v.info.required_local && local != v.info.required_local) {
    return fmt::format("the kernel requires the local size {} (reqd_work_group_size); {} cannot run it",
                       to_string(v.info.required_local), to_string(local));
  }
  if (!local) {
    if (m.spec->null_local_allowed()) return {};
    return "the kernel sizes a __local argument from the local size, so it needs an explicit one (not NULL)";
  }
  const Extent g = m.spec->block_global(p, b);
  if (local->dims < g.dims) {
    return fmt::format("local size {} has {} dimension(s) but the NDRange {} has {}", to_string(local), local->dims,
                       to_string(g), g.dims);
  }
  for (unsigned d = 0; d < 3; ++d) {
    if (d >= g.dims && (*local)[d] != 1) {
      return fmt::format("local size {} has {} dimension(s) but the NDRange {} has {}", to_string(local), local->dims,
                         to_string(g), g.dims);
    }
    if (d >= g.dims) continue;
    const bool divides = (*local)[d] != 0 && g[d] % (*local)[d] == 0;
    if ((*local)[d] == 0 || (!divides && !m.spec->guards_bounds() && !info.non_uniform_work_groups)) {
      return fmt::format(
          "local size {} does not divide the global size {} in dimension {} "
          "(CL_INVALID_WORK_GROUP_SIZE)",
          to_string(local), to_string(g), d);
    }
    if (d < info.max_work_item_sizes.size() && (*local)[d] > info.max_work_item_sizes[d]) {
      return fmt::format("local size {} exceeds the device's max work-item size {} in dimension {}", to_string(local),
                         info.max_work_item_sizes[d], d);
    }
  }
  const std::size_t limit =
      kernel_limit ? std::min(v.info.work_group_size, info.max_work_group_size) : info.max_work_group_size;
  if (local->count() > limit) {
    return fmt::format(
        "local size {} has {} work-items, above the limit {} (min of device max "
        "work-group size {} and CL_KERNEL_WORK_GROUP_SIZE {})",
        to_string(local), local->count(), limit, info.max_work_group_size, v.info.work_group_size);
  }
  return local_memory_refusal(info, v.info.local_mem_bytes, kernel_limit);
}

std::string local_memory_refusal(const DeviceInfo& device, std::uint64_t kernel_local_mem_bytes, bool kernel_limit) {
  if (!device.local_mem_bytes || kernel_local_mem_bytes <= device.local_mem_bytes) return {};
  if (!kernel_limit && device.type == "gpu") return {};
  return fmt::format("the kernel needs {} bytes of local memory, the device has {}", kernel_local_mem_bytes,
                     device.local_mem_bytes);
}

std::vector<InputPlacement> DeviceRunner::Impl::placements(const Problem& p, const Block& b,
                                                           const std::vector<HostBuffer>& block_inputs) const {
  std::vector<InputPlacement> place = spec->input_placement(p, b);
  if (place.empty())
    for (const auto& h : block_inputs) place.push_back(InputPlacement{0, h.size()});
  if (place.size() != block_inputs.size())
    throw Error(fmt::format("{}: {} input placements for {} inputs", spec->name(), place.size(), block_inputs.size()));
  return place;
}

namespace {
// True when `outs` has an output that starts as an input (in place).
bool has_in_place(const std::vector<OutputBuffer>& outs) {
  return std::any_of(outs.begin(), outs.end(), [](const OutputBuffer& o) { return o.from_input.has_value(); });
}
}  // namespace

void DeviceRunner::upload(const Problem& p, const Block& b, const std::vector<HostBuffer>& block_inputs,
                          const std::string& resident_id) {
  auto& m = *impl_;
  const auto t_up = std::chrono::steady_clock::now();
  if (!resident_id.empty() && resident_id == m.resident_upload_id && m.has_upload && m.uploaded == b &&
      m.uploaded_params == p.params && !has_in_place(m.spec->outputs(p, b))) {
    m.h2d.ms.clear();  // nothing written: the device holds these inputs
    m.h2d_wall_ms = 0;
    m.uploaded_bytes = 0;
    m.upload_spans.clear();
    return;
  }
  m.resident_upload_id.clear();  // until this upload completes
  m.upload_spans.clear();
  detail::EventClock clock;
  clock.start();
  m.has_upload = false;  // until this upload completes
  m.inputs.clear();
  m.outputs.clear();
  m.h2d.ms.clear();
  m.uploaded_inputs.assign(block_inputs.size(), HostBuffer{});
  m.uploaded_bytes = 0;
  const auto outs = m.spec->outputs(p, b);
  const std::vector<InputPlacement> place = m.placements(p, b, block_inputs);
  std::vector<bool> in_place(block_inputs.size(), false);
  for (const auto& o : outs) {
    if (!o.from_input) continue;
    in_place.at(*o.from_input) = true;
    if (o.restore_each_run) m.uploaded_inputs.at(*o.from_input) = block_inputs[*o.from_input];
  }
  std::vector<cl::Event> events;
  for (std::size_t i = 0; i < block_inputs.size(); ++i) {
    if (in_place[i]) continue;
    const auto& host = block_inputs[i];
    const std::size_t eb = host.type().bytes();
    cl::Buffer buf = m.pooled(m.input_pool, m.inputs.size(), Impl::buffer_elements(place[i], host) * eb,
                              CL_MEM_READ_ONLY, "clCreateBuffer(input)");
    if (!host.empty()) {
      cl::Event ev;
      WSTUNE_CL_CHECK(
          m.queue.enqueueWriteBuffer(buf, CL_FALSE, place[i].offset * eb, host.bytes(), host.data(), nullptr, &ev));
      events.push_back(ev);
      m.uploaded_bytes += host.bytes();
    }
    m.inputs.push_back(buf);
  }
  for (std::size_t i = 0; i < outs.size(); ++i) {
    OutputSlot slot{outs[i], {}, nullptr, 0, {}};
    if (outs[i].from_input) {
      slot.initial = &block_inputs.at(*outs[i].from_input);  // uploaded from the caller's memory (pinned there)
      slot.initial_offset = place.at(*outs[i].from_input).offset;
      if (slot.initial_offset + slot.initial->size() > outs[i].device_count)
        throw Error(fmt::format("{}: in-place output {} has {} elements but its input needs {}", m.spec->name(), i,
                                outs[i].device_count, slot.initial_offset + slot.initial->size()));
    }
    slot.buffer = m.pooled(m.output_pool, i, outs[i].device_count * outs[i].type.bytes(), CL_MEM_READ_WRITE,
                           "clCreateBuffer(output)");
    m.outputs.push_back(std::move(slot));
  }
  m.restore_outputs(true, &events);
  WSTUNE_CL_CHECK(m.queue.finish());
  m.outputs_clean = true;
  for (auto& o : m.outputs)  // later runs restore from the copy, which outlives the caller's buffer
    if (o.initial) o.initial = o.spec.restore_each_run ? &m.uploaded_inputs.at(*o.spec.from_input) : nullptr;
  if (!events.empty()) {
    m.h2d.ms.push_back(event_span_ms(events.front(), events.back()));
    clock.anchor(events.front());
    m.upload_spans.push_back(clock.span("upload", -1, events.front(), events.back()));
  }
  m.h2d_wall_ms = ms_since(t_up);
  m.uploaded = b;
  m.uploaded_params = p.params;
  m.has_upload = true;
  m.resident_upload_id = resident_id;
}

namespace {

// The warm-ups, then samples while `timing` wants more (RunResult::kernel,
// warmup_counted). With WSTUNE_TIMING_LOCK set, one process at a time
// across the processes sharing the lock file (the lock is released before
// the read-back). `once` runs the kernel once and returns its events.
template <class Once>
void time_samples(Once&& once, const TimingOptions& timing, RunResult& r) {
  const detail::TimingLock exclusive;
  double warmup_ms = 0;  // the last warm-up's kernel time
  for (unsigned i = 0; i < timing.warmup; ++i)
    if (const auto events = once(); !events.empty()) warmup_ms = event_span_ms(events.front(), events.back());
  double sum = 0;
  // The spread (a sort) only once the count and time targets are met.
  auto more = [&] {
    const std::size_t n = r.kernel.size();
    return timing.more(n, sum) || (timing.max_median_error > 0 && timing.more(n, sum, r.kernel.relative_iqr()));
  };
  while (more()) {
    const auto events = once();
    if (events.empty()) break;  // nothing to time
    r.kernel.ms.push_back(event_span_ms(events.front(), events.back()));
    sum += r.kernel.ms.back();
    if (r.kernel.ms.size() == 1 && timing.warmup_counts(warmup_ms, r.kernel.ms[0])) {  // warmup_ms 0: none ran
      r.kernel.ms.insert(r.kernel.ms.begin(), warmup_ms);
      sum += warmup_ms;
      r.warmup_counted = true;
    }
  }
}

}  // namespace

RunResult DeviceRunner::run(const Problem& p, const Block& b, const LocalSize& local, const TimingOptions& timing,
                            bool read_outputs, std::pmr::memory_resource* output_memory) {
  auto& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.local = local;
  r.h2d = m.h2d;
  r.h2d_wall_ms = m.h2d_wall_ms;
  r.h2d_bytes = m.uploaded_bytes;
  r.spans = m.upload_spans;
  if (!m.has_upload || !(m.uploaded == b)) {
    r.status = TrialStatus::runtime;
    r.error = "run() called before upload() of this block";
    return r;
  }
  Variant& v = m.variant_for(p, b, local);
  if (!Impl::take_build(v, r)) {
    r.wall_ms = ms_since(t0);
    return r;
  }
  // The build's CL_KERNEL_WORK_GROUP_SIZE and CL_KERNEL_LOCAL_MEM_SIZE are
  // not checked before the launch: a driver that runs more than it reports
  // (NVIDIA's 256 work-items, its 48 KiB CL_DEVICE_LOCAL_MEM_SIZE) decides
  // at the launch, and a refusal there is the configuration's constraints
  // status.
  if (std::string why = check_local(p, b, local, false); !why.empty()) {
    r.status = TrialStatus::constraints;
    r.error = why;
    r.wall_ms = ms_since(t0);
    return r;
  }
  r.global = launch_global(p, b, local);
  std::vector<cl::Buffer> outs;
  for (const auto& o : m.outputs) outs.push_back(o.buffer);
  try {
    // In-place outputs start from their initial contents: the upload wrote
    // them, later runs restore them (from a device copy when there are
    // several runs).
    if (m.outputs_clean && timing.warmup + std::max(1u, timing.repetitions) > 1) m.keep_pristine();
    detail::EventClock clock;
    auto once = [&] {
      if (!m.outputs_clean) m.restore_outputs(false, nullptr);
      m.outputs_clean = false;
      clock.start();  // each run is anchored afresh (the queue finished between runs)
      auto events = m.spec->enqueue(m.queue, v.kernel, p, b, m.inputs, outs, local, r.global);
      WSTUNE_CL_CHECK(m.queue.finish());
      if (!events.empty()) {
        clock.anchor(events.front());
        r.spans.push_back(clock.span("kernel", -1, events.front(), events.back()));
      }
      return events;
    };
    time_samples(once, timing, r);
    const auto t_read = std::chrono::steady_clock::now();
    clock.start();
    const std::vector<cl::Event> reads = m.read_back(read_outputs, output_memory, r);
    WSTUNE_CL_CHECK(m.queue.finish());
    r.d2h_wall_ms = ms_since(t_read);
    if (!reads.empty()) {
      r.d2h.ms.push_back(event_span_ms(reads.front(), reads.back()));
      clock.anchor(reads.front());
      r.spans.push_back(clock.span("download", -1, reads.front(), reads.back()));
    }
  } catch (const ClError& e) {
    r.status = Impl::failure_status(e);
    r.error = e.what();
    if (local && local->count() > v.info.work_group_size &&
        (e.code() == CL_INVALID_WORK_GROUP_SIZE || e.code() == CL_OUT_OF_RESOURCES)) {
      r.status = TrialStatus::constraints;
      r.error = fmt::format(
          "local size {} has {} work-items, above the kernel's CL_KERNEL_WORK_GROUP_SIZE {}, and the "
          "launch was refused: {}",
          to_string(local), local->count(), v.info.work_group_size, e.what());
    } else if (m.device.info.local_mem_bytes && v.info.local_mem_bytes > m.device.info.local_mem_bytes &&
               e.code() == CL_OUT_OF_RESOURCES) {
      r.status = TrialStatus::constraints;
      r.error = fmt::format(
          "the kernel needs {} bytes of local memory (CL_KERNEL_LOCAL_MEM_SIZE), above the device's "
          "CL_DEVICE_LOCAL_MEM_SIZE {}, and the launch was refused: {}",
          v.info.local_mem_bytes, m.device.info.local_mem_bytes, e.what());
    }
    // A failed enqueue can leave commands behind; drain them, ignoring errors.
    check_nothrow(clFinish(m.queue()), "clFinish after a failed run");
  } catch (const std::exception& e) {  // e.g. a __local size expression that does not evaluate
    r.status = TrialStatus::runtime;
    r.error = e.what();
    check_nothrow(clFinish(m.queue()), "clFinish after a failed run");
  }
  r.wall_ms = ms_since(t0);
  return r;
}

namespace {

// Up to `n` parameter sets after `start` in the parameters' odometer order
// (the last parameter fastest), wrapping round, that the kernel's
// constraints allow.
std::vector<nlohmann::json> next_valid(const KernelSpec& k, const Problem& p, const nlohmann::json& start,
                                       std::size_t n) {
  const auto& params = k.tuning_parameters();
  std::vector<std::size_t> idx(params.size(), 0);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& vs = params[i].values;
    const auto it =
        start.contains(params[i].name) ? std::find(vs.begin(), vs.end(), start.at(params[i].name)) : vs.end();
    if (it != vs.end()) idx[i] = static_cast<std::size_t>(it - vs.begin());
  }
  std::vector<nlohmann::json> out;
  for (std::size_t steps = 0; out.size() < n && steps < 1'000'000; ++steps) {
    std::size_t i = params.size();
    while (i > 0 && ++idx[i - 1] == params[i - 1].values.size()) idx[--i] = 0;
    nlohmann::json c = nlohmann::json::object();
    for (std::size_t j = 0; j < params.size(); ++j) c[params[j].name] = params[j].values[idx[j]];
    if (c == start) break;  // round the whole space
    try {
      if (k.satisfies_constraints(with_params(p, c))) out.push_back(std::move(c));
    } catch (const UsageError&) {  // a condition that does not evaluate for it: not a candidate
    }
  }
  return out;
}

// The outputs of configuration `rp` run once on `runner`, or why it failed.
std::optional<std::vector<HostBuffer>> run_reference(DeviceRunner& runner, const Problem& rp,
                                                     const std::vector<HostBuffer>& inputs, std::string& why) {
  const KernelSpec& k = runner.spec();
  try {
    const Block rb = k.whole(rp);
    runner.upload(rp, rb, k.block_inputs(rp, inputs, rb));
    const RunResult rr = runner.run(rp, rb, k.parameter_local(rp), TimingOptions{0, 1});
    if (!rr.ok()) {
      why = fmt::format("{}: {}", to_string(rr.status), rr.error);
      return std::nullopt;
    }
    std::vector<HostBuffer> ref = k.empty_outputs(rp);
    k.place_block(rp, rb, rr.outputs, ref);
    k.finish(rp, {rb}, ref);
    return ref;
  } catch (const UsageError& e) {  // an NDRange or buffer size that does not evaluate for these values
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::vector<HostBuffer> reference_outputs(DeviceRunner& runner, const Problem& p, const std::vector<HostBuffer>& inputs,
                                          ReferenceChoice* choice) {
  const KernelSpec& k = runner.spec();
  ReferenceChoice local_choice;
  ReferenceChoice& c = choice ? *choice : local_choice;
  c = ReferenceChoice{};
  if (k.has_reference()) return k.reference(p, inputs);
  std::vector<nlohmann::json> candidates{k.reference_params()};
  if (!k.tuning_parameters().empty()) {
    auto next = next_valid(k, p, k.reference_params(), kReferenceAttempts - 1);
    candidates.insert(candidates.end(), std::make_move_iterator(next.begin()), std::make_move_iterator(next.end()));
  }
  std::string first_why;
  for (const nlohmann::json& params : candidates) {
    const Problem rp = with_params(p, params);
    std::string why;
    if (auto ref = run_reference(runner, rp, inputs, why)) {
      c.params = params;
      return std::move(*ref);
    }
    if (first_why.empty()) first_why = why;
    c.rejected.emplace_back(params, why);
  }
  const Problem rp = with_params(p, k.reference_params());
  throw Error(fmt::format(
      "{}: the reference configuration ({}) failed on {}: {}{}", k.name(),
      to_string(Configuration{rp.params, k.parameter_local(rp)}), runner.device().info.name, first_why,
      candidates.size() > 1 ? fmt::format("; and so did the {} valid configurations after it", candidates.size() - 1)
                            : std::string()));
}

Verdict verify_outputs(const KernelSpec& k, const Problem& p, const Block& b, const std::vector<HostBuffer>& outputs,
                       const std::vector<HostBuffer>& ref) {
  // The whole block's outputs are the whole outputs (KernelSpec::place_block's
  // contract): compared in place, with no copy of a large buffer.
  if (b == k.whole(p, b.dim)) return k.verify(p, outputs, ref);
  std::vector<HostBuffer> full = k.empty_outputs(p);
  k.place_block(p, b, outputs, full);
  k.finish(p, {b}, full);
  return k.verify(p, full, ref);
}

std::string verification_error(const Verdict& v) {
  return fmt::format("verification failed: {} = {:.3g} > {:.3g}", v.detail, v.max_error, v.tolerance);
}

RunResult run_and_verify(DeviceRunner& runner, const Problem& p, const LocalSize& local, const TimingOptions& timing,
                         std::uint64_t seed, Verdict* verdict) {
  const KernelSpec& k = runner.spec();
  const Block whole = k.whole(p);
  const auto inputs = k.generate_inputs(p, seed);
  std::vector<HostBuffer> ref;
  try {
    ref = reference_outputs(runner, p, inputs);
  } catch (const Error& e) {
    RunResult r;
    r.status = TrialStatus::correctness;
    r.error = e.what();
    return r;
  }
  runner.upload(p, whole, k.block_inputs(p, inputs, whole));
  RunResult r = runner.run(p, whole, local, timing);
  if (!r.ok()) return r;
  const Verdict v = verify_outputs(k, p, whole, r.outputs, ref);
  if (!v.ok) {
    r.status = TrialStatus::correctness;
    r.error = verification_error(v);
  }
  if (verdict) *verdict = v;
  return r;
}

}  // namespace wstune
