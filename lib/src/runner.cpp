#include "wstune/runner.hpp"

#include <chrono>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

struct DeviceRunner::Impl {
  Device device;
  const KernelSpec* spec;
  cl::Context context;
  cl::CommandQueue queue;
  cl::Program program;
  cl::Kernel kernel;
  std::size_t kernel_wg = 0;
  cl_ulong kernel_lmem = 0;
  std::vector<cl::Buffer> inputs;
  cl::Buffer output;
  // Device buffers are kept between uploads and reused while they are big
  // enough: allocating (and, on NVIDIA, first-touch mapping) on every
  // upload costs more than a small kernel.
  std::vector<std::pair<cl::Buffer, std::size_t>> input_pool;  // buffer, bytes
  std::size_t output_bytes = 0;
  Samples h2d;
  double h2d_wall_ms = 0;  // wall clock of the last upload()
  Block uploaded{};
  bool has_upload = false;
};

DeviceRunner::DeviceRunner(Device device, const KernelSpec& spec, std::string build_options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.device = std::move(device);
  m.spec = &spec;
  cl_int err = CL_SUCCESS;
  m.context = cl::Context(m.device.device, nullptr, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  m.queue = cl::CommandQueue(m.context, m.device.device, CL_QUEUE_PROFILING_ENABLE, &err);
  check(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");
  m.program = cl::Program(m.context, std::string(spec.source()), false, &err);
  check(err, "clCreateProgramWithSource");
  const std::string options = "-cl-std=CL1.2 " + build_options;
  err = m.program.build(std::vector<cl::Device>{m.device.device}, options.c_str());
  if (err != CL_SUCCESS) {
    std::string log;
    m.program.getBuildInfo(m.device.device, CL_PROGRAM_BUILD_LOG, &log);
    throw BuildError(fmt::format("clBuildProgram({}.cl, \"{}\")", spec.name(), options), err, log);
  }
  m.kernel = cl::Kernel(m.program, std::string(spec.entry_point()).c_str(), &err);
  check(err, "clCreateKernel");
  WSTUNE_CL_CHECK(m.kernel.getWorkGroupInfo(m.device.device, CL_KERNEL_WORK_GROUP_SIZE, &m.kernel_wg));
  WSTUNE_CL_CHECK(m.kernel.getWorkGroupInfo(m.device.device, CL_KERNEL_LOCAL_MEM_SIZE, &m.kernel_lmem));
}

DeviceRunner::~DeviceRunner() {
  if (impl_) check_nothrow(impl_->queue() ? clFinish(impl_->queue()) : CL_SUCCESS, "clFinish in ~DeviceRunner");
}

const Device& DeviceRunner::device() const noexcept { return impl_->device; }
const KernelSpec& DeviceRunner::spec() const noexcept { return *impl_->spec; }
std::size_t DeviceRunner::kernel_work_group_size() const noexcept { return impl_->kernel_wg; }
std::size_t DeviceRunner::max_local_items() const noexcept {
  return std::min(impl_->kernel_wg, impl_->device.info.max_work_group_size);
}
std::uint64_t DeviceRunner::kernel_local_mem_bytes() const noexcept { return impl_->kernel_lmem; }

std::string DeviceRunner::check_local(const Problem& p, const Block& b, const LocalSize& local) const {
  if (!local) return {};
  const Extent g = impl_->spec->block_global(p, b);
  const auto& info = impl_->device.info;
  if (local->dims != g.dims && !(local->dims == 2 && local->y == 1 && g.dims == 1)) {
    return fmt::format("local size {} has {} dimension(s) but the NDRange {} has {}", to_string(local),
                       local->dims, to_string(g), g.dims);
  }
  for (unsigned d = 0; d < g.dims; ++d) {
    if ((*local)[d] == 0 || g[d] % (*local)[d] != 0) {
      return fmt::format("local size {} does not divide the global size {} in dimension {} "
                         "(CL_INVALID_WORK_GROUP_SIZE)", to_string(local), to_string(g), d);
    }
    if (d < info.max_work_item_sizes.size() && (*local)[d] > info.max_work_item_sizes[d]) {
      return fmt::format("local size {} exceeds the device's max work-item size {} in dimension {}",
                         to_string(local), info.max_work_item_sizes[d], d);
    }
  }
  if (local->count() > max_local_items()) {
    return fmt::format("local size {} has {} work-items, above the limit {} (min of device max "
                       "work-group size {} and CL_KERNEL_WORK_GROUP_SIZE {})", to_string(local),
                       local->count(), max_local_items(), info.max_work_group_size, impl_->kernel_wg);
  }
  return {};
}

void DeviceRunner::upload(const Problem& p, const Block& b, const std::vector<HostBuffer>& block_inputs) {
  auto& m = *impl_;
  cl_int err = CL_SUCCESS;
  const auto t_up = std::chrono::steady_clock::now();
  m.inputs.clear();
  m.h2d.ms.clear();
  const bool in_place = m.spec->in_place();
  const std::size_t out_floats = m.spec->device_output_size(p, b);
  // A kept buffer is reused while it holds at least `floats` floats.
  auto fit = [&](cl::Buffer& buf, std::size_t& cap, cl_mem_flags flags, std::size_t floats, const char* call) {
    const std::size_t bytes = std::max<std::size_t>(1, floats) * sizeof(float);
    if (buf() && cap >= bytes) return;
    buf = cl::Buffer(m.context, flags, bytes, nullptr, &err);
    check(err, call);
    cap = bytes;
  };
  fit(m.output, m.output_bytes, CL_MEM_READ_WRITE, out_floats, "clCreateBuffer(output)");
  std::vector<cl::Event> events;
  for (std::size_t i = 0; i < block_inputs.size(); ++i) {
    const auto& host = block_inputs[i];
    cl::Event ev;
    if (in_place && i == 0) {
      if (host.size() != out_floats) throw Error("in-place kernel input size differs from its output buffer");
      WSTUNE_CL_CHECK(m.queue.enqueueWriteBuffer(m.output, CL_FALSE, 0, host.size() * sizeof(float), host.data(), nullptr, &ev));
    } else {
      const std::size_t slot = m.inputs.size();
      if (slot >= m.input_pool.size()) m.input_pool.emplace_back(cl::Buffer(), 0);
      auto& [buf, cap] = m.input_pool[slot];
      fit(buf, cap, CL_MEM_READ_ONLY, host.size(), "clCreateBuffer(input)");
      WSTUNE_CL_CHECK(m.queue.enqueueWriteBuffer(buf, CL_FALSE, 0, host.size() * sizeof(float), host.data(), nullptr, &ev));
      m.inputs.push_back(buf);
    }
    events.push_back(ev);
  }
  WSTUNE_CL_CHECK(m.queue.finish());
  if (!events.empty()) m.h2d.ms.push_back(event_span_ms(events.front(), events.back()));
  m.h2d_wall_ms = ms_since(t_up);
  m.uploaded = b;
  m.has_upload = true;
}

RunResult DeviceRunner::run(const Problem& p, const Block& b, const LocalSize& local, const TimingOptions& timing) {
  auto& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.local = local;
  r.h2d = m.h2d;
  r.h2d_wall_ms = m.h2d_wall_ms;
  if (!m.has_upload || !(m.uploaded == b)) {
    r.status = TrialStatus::runtime;
    r.error = "run() called before upload() of this block";
    return r;
  }
  if (std::string why = check_local(p, b, local); !why.empty()) {
    r.status = TrialStatus::constraints;
    r.error = why;
    r.wall_ms = ms_since(t0);
    return r;
  }
  try {
    for (unsigned i = 0; i < timing.warmup; ++i) {
      m.spec->enqueue(m.queue, m.kernel, p, b, m.inputs, m.output, local);
      WSTUNE_CL_CHECK(m.queue.finish());
    }
    double sum = 0;
    // The spread (a sort) only once the count and time targets are met.
    auto more = [&] {
      const std::size_t n = r.kernel.size();
      return timing.more(n, sum) || (timing.max_median_error > 0 && timing.more(n, sum, r.kernel.relative_iqr()));
    };
    while (more()) {
      auto events = m.spec->enqueue(m.queue, m.kernel, p, b, m.inputs, m.output, local);
      WSTUNE_CL_CHECK(m.queue.finish());
      if (events.empty()) break;  // nothing to time
      r.kernel.ms.push_back(event_span_ms(events.front(), events.back()));
      sum += r.kernel.ms.back();
    }
    r.output.resize(m.spec->block_output_size(p, b));
    cl::Event ev;
    const auto t_read = std::chrono::steady_clock::now();
    WSTUNE_CL_CHECK(m.queue.enqueueReadBuffer(m.output, CL_TRUE, 0, r.output.size() * sizeof(float), r.output.data(), nullptr, &ev));
    r.d2h_wall_ms = ms_since(t_read);
    r.d2h.ms.push_back(event_span_ms(ev, ev));
  } catch (const ClError& e) {
    r.status = e.code() == CL_INVALID_WORK_GROUP_SIZE || e.code() == CL_INVALID_WORK_ITEM_SIZE
                   ? TrialStatus::constraints : TrialStatus::runtime;
    r.error = e.what();
    // A failed enqueue can leave commands behind; drain them, ignoring errors.
    check_nothrow(clFinish(m.queue()), "clFinish after a failed run");
  }
  r.wall_ms = ms_since(t0);
  return r;
}

RunResult run_and_verify(DeviceRunner& runner, const Problem& p, const LocalSize& local,
                         const TimingOptions& timing, std::uint64_t seed, Verdict* verdict) {
  const KernelSpec& k = runner.spec();
  const Block whole = k.whole(p);
  const auto inputs = k.generate_inputs(p, seed);
  runner.upload(p, whole, k.block_inputs(p, inputs, whole));
  RunResult r = runner.run(p, whole, local, timing);
  if (!r.ok()) return r;
  HostBuffer full(k.output_size(p));
  k.place_block(p, whole, r.output, full);
  k.finish(p, {whole}, full);
  Verdict v = k.verify(p, full, k.reference(p, inputs));
  if (!v.ok) {
    r.status = TrialStatus::correctness;
    r.error = fmt::format("verification failed: {} = {:.3g} > {:.3g}", v.detail, v.max_error, v.tolerance);
  }
  if (verdict) *verdict = v;
  return r;
}

}  // namespace wstune
