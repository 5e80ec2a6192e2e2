// wstune::Tuner: the run-time API for OpenCL apps (see tuner.hpp).
#include "wstune/tuner.hpp"

#include <chrono>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/rules.hpp"
#include "wstune/search.hpp"
#include "wstune/trial.hpp"

namespace wstune {

Extent extent_of(const cl::NDRange& range) {
  const auto dims = range.dimensions();
  if (dims == 1) return Extent{range[0], 1, 1};
  if (dims == 2) return Extent{range[0], range[1], 2};
  throw UsageError(fmt::format("wstune tunes 1-D and 2-D NDRanges; this one has {} dimensions", dims));
}

namespace {

struct KernelFacts {
  KernelKey key;
  std::size_t max_items = 0;         // CL_KERNEL_WORK_GROUP_SIZE
  std::uint64_t local_mem_bytes = 0; // CL_KERNEL_LOCAL_MEM_SIZE
};

cl_device_id queue_device(cl_command_queue q) {
  cl_device_id d = nullptr;
  WSTUNE_CL_CHECK(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, nullptr));
  return d;
}

std::string kernel_name(cl_kernel k) {
  std::size_t n = 0;
  WSTUNE_CL_CHECK(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &n));
  std::string s(n, '\0');
  WSTUNE_CL_CHECK(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, s.data(), nullptr));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

KernelFacts kernel_facts(cl_kernel k, cl_device_id dev) {
  KernelFacts f;
  f.key.name = kernel_name(k);
  cl_program prog = nullptr;
  WSTUNE_CL_CHECK(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, nullptr));
  std::size_t n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_SOURCE, 0, nullptr, &n) == CL_SUCCESS && n > 1) {
    std::string src(n, '\0');
    WSTUNE_CL_CHECK(clGetProgramInfo(prog, CL_PROGRAM_SOURCE, n, src.data(), nullptr));
    while (!src.empty() && src.back() == '\0') src.pop_back();
    f.key.source_hash = fnv1a_hex(src);
  }
  if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_OPTIONS, 0, nullptr, &n) == CL_SUCCESS && n > 1) {
    std::string opts(n, '\0');
    WSTUNE_CL_CHECK(clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_OPTIONS, n, opts.data(), nullptr));
    while (!opts.empty() && opts.back() == '\0') opts.pop_back();
    f.key.build_options = opts;
  }
  WSTUNE_CL_CHECK(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof f.max_items, &f.max_items,
                                           nullptr));
  cl_ulong lm = 0;
  WSTUNE_CL_CHECK(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, nullptr));
  f.local_mem_bytes = lm;
  return f;
}

// Times an app's kernel (with its current arguments) on a profiling queue.
class AppEvaluator final : public Evaluator {
 public:
  AppEvaluator(cl_command_queue queue, cl_kernel kernel, const Extent& global, const DeviceInfo& dev,
               const KernelFacts& facts)
      : kernel_(kernel, true) {
    cl_context ctx = nullptr;
    WSTUNE_CL_CHECK(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr));
    cl_int err = CL_SUCCESS;
    const cl_device_id d = queue_device(queue);
    cl_command_queue pq = clCreateCommandQueue(ctx, d, CL_QUEUE_PROFILING_ENABLE, &err);
    WSTUNE_CL_CHECK(err);
    queue_ = cl::CommandQueue(pq, false);
    target_.kernel = facts.key.name;
    target_.global = global;
    target_.priority = Priority::none;  // unknown for an app's kernel: the rule reads it as x
    target_.limits.max_work_group_size = dev.max_work_group_size;
    target_.limits.kernel_work_group_size = facts.max_items;
    target_.limits.max_work_item_sizes = dev.max_work_item_sizes;
    target_.limits.local_mem_bytes = dev.local_mem_bytes;
    target_.limits.kernel_local_mem_bytes = facts.local_mem_bytes;
    target_.pe_per_cu = dev.pe_per_cu;
    target_.device_name = dev.name;
    target_.device_id = dev.id();
    target_.device_fingerprint = dev.fingerprint();
    target_.problem = global;
    const auto shapes = enumerate_local_sizes(global, target_.limits);
    space_ = SearchSpace(shapes, paper_rule(global, shapes, target_.priority, target_.pe_per_cu));
  }
  const TuneTarget& target() const override { return target_; }
  const SearchSpace& space() const override { return space_; }

  Trial evaluate(const Configuration& config, const TimingOptions& timing) override {
    const LocalSize& local = config.local;
    Trial t;
    t.local = local;
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t global[2] = {target_.global.x, target_.global.y};
    const std::size_t lsize[2] = {local ? local->x : 1, local ? local->y : 1};
    for (unsigned i = 0; i < timing.warmup + timing.repetitions; ++i) {
      cl_event ev = nullptr;
      cl_int err = clEnqueueNDRangeKernel(queue_(), kernel_(), target_.global.dims, nullptr, global,
                                          local ? lsize : nullptr, 0, nullptr, &ev);
      if (err == CL_SUCCESS) err = clWaitForEvents(1, &ev);
      if (err != CL_SUCCESS) {
        if (ev) clReleaseEvent(ev);
        t.status = TrialStatus::runtime;
        t.error = fmt::format("clEnqueueNDRangeKernel: {} ({})", cl_error_name(err), err);
        t.kernel.ms.clear();
        break;
      }
      const cl::Event event(ev, false);
      if (i >= timing.warmup) t.kernel.ms.push_back(event_span_ms(event, event));
    }
    t.run_wall_ms = ms_since(t0);
    t.wall_ms = t.run_wall_ms;
    return t;
  }

 private:
  cl::Kernel kernel_;
  cl::CommandQueue queue_;
  TuneTarget target_;
  SearchSpace space_;
};

}  // namespace

TrialRecord to_record(const Trial& t) {
  TrialRecord r;
  r.params = t.params;
  r.local = t.local;
  r.global = t.global;
  if (t.compile_ms > 0) r.compile_ms = t.compile_ms;
  if (t.verified) r.verify_ms = t.verify_ms;
  r.status = t.status;
  r.error = t.error;
  r.samples_ms = t.kernel.ms;
  r.run_ms = t.run_wall_ms;
  return r;
}

Trial from_record(const TrialRecord& r) {
  Trial t;
  t.params = r.params;
  t.local = r.local;
  t.global = r.global;
  t.compile_ms = r.compile_ms.value_or(0);
  t.verify_ms = r.verify_ms.value_or(0);
  t.status = r.status;
  t.error = r.error;
  t.kernel.ms = r.samples_ms;
  t.run_wall_ms = r.run_ms.value_or(0);
  t.from_store = true;
  return t;
}

struct Tuner::Impl {
  std::unique_ptr<Store> owned;
  Store* store = nullptr;
  TunerOptions options;
  std::unique_ptr<Lookup> lookup;
  std::map<cl_device_id, DeviceInfo> devices;
  std::map<std::pair<cl_kernel, cl_device_id>, KernelFacts> kernels;
  PeOverrides overrides = PeOverrides::from_environment();

  const KernelFacts& facts(cl_kernel k, cl_device_id d) {
    auto it = kernels.find({k, d});
    if (it == kernels.end()) it = kernels.emplace(std::pair{k, d}, kernel_facts(k, d)).first;
    return it->second;
  }
};

Tuner::Tuner(const std::string& db_path, TunerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->owned = std::make_unique<Store>(db_path.empty() ? default_db_path() : db_path, options.store);
  impl_->store = impl_->owned.get();
  impl_->lookup = std::make_unique<Lookup>(*impl_->store, options.lookup);
  impl_->options = std::move(options);
}

Tuner::Tuner(Store& store, TunerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->store = &store;
  impl_->lookup = std::make_unique<Lookup>(store, options.lookup);
  impl_->options = std::move(options);
}

Tuner::~Tuner() = default;

Store& Tuner::store() const noexcept { return *impl_->store; }
Lookup& Tuner::lookup_chain() const noexcept { return *impl_->lookup; }

const DeviceInfo& Tuner::device_info(cl_command_queue queue) {
  const cl_device_id id = queue_device(queue);
  auto it = impl_->devices.find(id);
  if (it != impl_->devices.end()) return it->second;
  const cl::Device device(id, true);
  // The raw query: opencl.hpp versions differ in the C++ type of CL_DEVICE_PLATFORM.
  cl_platform_id platform_id = nullptr;
  WSTUNE_CL_CHECK(clGetDeviceInfo(id, CL_DEVICE_PLATFORM, sizeof platform_id, &platform_id, nullptr));
  const cl::Platform platform(platform_id, true);
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  unsigned pi = 0, di = 0;
  for (unsigned p = 0; p < platforms.size(); ++p) {
    if (platforms[p]() != platform()) continue;
    pi = p;
    std::vector<cl::Device> devs;
    platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &devs);
    for (unsigned d = 0; d < devs.size(); ++d)
      if (devs[d]() == id) di = d;
  }
  return impl_->devices.emplace(id, query_device_info(platform, device, pi, di, impl_->overrides)).first->second;
}

LookupResult Tuner::lookup(cl_command_queue queue, cl_kernel kernel, const Extent& global) {
  const DeviceInfo& dev = device_info(queue);
  const KernelFacts& f = impl_->facts(kernel, queue_device(queue));
  return impl_->lookup->find(dev, f.key.name, global, f.max_items);
}

LocalSize Tuner::local_size(cl_command_queue queue, cl_kernel kernel, const Extent& global) {
  return lookup(queue, kernel, global).local;
}

LocalSize Tuner::local_size(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global) {
  return local_size(queue(), kernel(), extent_of(global));
}

LookupResult Tuner::tune(cl_command_queue queue, cl_kernel kernel, const Extent& global) {
  const DeviceInfo& dev = device_info(queue);
  const KernelFacts& f = impl_->facts(kernel, queue_device(queue));
  Store& store = *impl_->store;
  const auto& o = impl_->options;
  const SessionRecord s =
      store.open_session(dev, f.key, ProblemKey{global, ""},
                         SessionSpec{"online", o.online_max_trials,
                                     std::chrono::duration<double>(o.online_max_time).count()});
  std::map<std::string, Trial> done;
  for (const TrialRecord& r : store.trials(s.id)) done.emplace(to_string(r.local), from_record(r));

  AppEvaluator evaluator(queue, kernel, global, dev, f);
  auto searcher = make_searcher("guided", 1);
  const unsigned left = o.online_max_trials > done.size() ? o.online_max_trials - static_cast<unsigned>(done.size()) : 0;
  auto stop = either(max_evaluations(left), time_limit(o.online_max_time));
  TuneOptions topt;
  topt.timing = o.online_timing;
  topt.tiebreak_rounds = 0;  // one stored trial per configuration
  topt.on_trial = [&](const Trial& t, TrialPhase) { store.add_trial(s.id, to_record(t)); };
  topt.lookup = [&](const Configuration& c) -> std::optional<Trial> {
    auto it = done.find(to_string(c.local));
    if (it == done.end()) return std::nullopt;
    return it->second;
  };
  const TuneResult res = wstune::tune(evaluator, *searcher, *stop, topt);
  store.derive_best(s.id, res.rule ? &res.rule->local : nullptr);
  store.end_session(s.id);
  return impl_->lookup->find(dev, f.key.name, global, f.max_items);
}

LookupResult Tuner::launch(cl_command_queue queue, cl_kernel kernel, const Extent& global, cl_event* event) {
  LookupResult r = lookup(queue, kernel, global);
  if (impl_->options.tune_online && r.level >= LookupLevel::architecture) r = tune(queue, kernel, global);
  const std::size_t g[2] = {global.x, global.y};
  const std::size_t l[2] = {r.local ? r.local->x : 1, r.local ? r.local->y : 1};
  WSTUNE_CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, global.dims, nullptr, g, r.local ? l : nullptr, 0, nullptr,
                                         event));
  return r;
}

LookupResult Tuner::launch(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global,
                           cl::Event* event) {
  cl_event ev = nullptr;
  LookupResult r = launch(queue(), kernel(), extent_of(global), event ? &ev : nullptr);
  if (event) *event = cl::Event(ev, false);
  return r;
}

}  // namespace wstune
