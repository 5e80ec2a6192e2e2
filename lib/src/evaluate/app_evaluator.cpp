// AppEvaluator: safe measurements of an app's kernel (see app_evaluator.hpp).
#include "evaluate/app_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "space/rules.hpp"
#include "space/search_space.hpp"
#include "wstune/error.hpp"

namespace wstune::detail {

namespace {

template <class T>
bool close(const unsigned char* a, const unsigned char* b, std::size_t bytes, double tol) noexcept {
  for (std::size_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) {
    T x, y;
    std::memcpy(&x, a + i, sizeof(T));
    std::memcpy(&y, b + i, sizeof(T));
    if (std::memcmp(&x, &y, sizeof(T)) == 0) continue;
    const double dx = x, dy = y;
    if (!(std::abs(dx - dy) <= tol * std::max(std::abs(dx), std::abs(dy)))) return false;  // NaN: mismatch
  }
  return std::memcmp(a + bytes / sizeof(T) * sizeof(T), b + bytes / sizeof(T) * sizeof(T), bytes % sizeof(T)) == 0;
}

TuneTarget target_of(const AppRun& r) {
  TuneTarget t = device_tune_target(*r.device, r.facts->max_items, r.facts->local_mem_bytes);
  t.kernel = r.facts->key.name;
  t.global = r.global;
  t.problem = r.global;
  t.priority = Priority::none;                            // unknown for an app's kernel: the rule reads it as x
  t.limits.any_shape = r.remainder != Remainder::divide;  // padded or non-uniform: not only divisors
  return t;
}

cl::CommandQueue profiling_queue(cl_command_queue app) {
  cl_context ctx = nullptr;
  WSTUNE_CL_CHECK(clGetCommandQueueInfo(app, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr));
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ctx, queue_device(app), CL_QUEUE_PROFILING_ENABLE, &err);
  WSTUNE_CL_CHECK(err);
  return cl::CommandQueue(q, false);
}

std::string cl_failure(const char* call, cl_int err) {
  return fmt::format("{}: {} ({})", call, cl_error_name(err), err);
}

}  // namespace

bool outputs_match(const unsigned char* a, const unsigned char* b, std::size_t bytes, char element,
                   double tolerance) noexcept {
  if (tolerance <= 0 || element == 'b') return std::memcmp(a, b, bytes) == 0;
  return element == 'f' ? close<float>(a, b, bytes, tolerance) : close<double>(a, b, bytes, tolerance);
}

AppEvaluator::AppEvaluator(AppRun run) : run_(std::move(run)), target_(target_of(run_)) {
  const auto shapes = enumerate_local_sizes(target_.global, target_.limits);
  space_ = SearchSpace(shapes, paper_rule(target_.global, shapes, target_.priority, target_.pe_per_cu));
  WSTUNE_CL_CHECK(clFinish(run_.app_queue));  // the app's writes to its buffers are done
  queue_ = profiling_queue(run_.app_queue);
  cl_context ctx = nullptr;
  WSTUNE_CL_CHECK(clGetCommandQueueInfo(run_.app_queue, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr));
  for (const WrittenArg& w : run_.written) {
    std::size_t n = 0;
    WSTUNE_CL_CHECK(clGetMemObjectInfo(w.buffer, CL_MEM_SIZE, sizeof n, &n, nullptr));
    cl_int err = CL_SUCCESS;
    cl_mem snap = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, nullptr, &err);
    WSTUNE_CL_CHECK(err);
    snapshots_.emplace_back(snap, false);
    bytes_.push_back(n);
    WSTUNE_CL_CHECK(clEnqueueCopyBuffer(queue_(), w.buffer, snap, 0, 0, n, 0, nullptr, nullptr));
  }
  WSTUNE_CL_CHECK(clFinish(queue_()));
  // The reference: NULL's output, else the first shape that runs.
  std::vector<LocalSize> order{std::nullopt};
  for (std::size_t i = 0; i < space_.size(); ++i) order.push_back(space_.local(i));
  for (const LocalSize& l : order) {
    if (!refuse(l).empty() || run_once(l, nullptr) != CL_SUCCESS) continue;
    reference_ = read_written();
    verified_.insert(to_string(l));
    return;
  }
  restore();
  throw UsageError(
      fmt::format("kernel {}: no local size runs over {} with its current arguments; check the "
                  "arguments and the local_args setter",
                  target_.kernel, to_string(run_.global)));
}

AppEvaluator::~AppEvaluator() {
  if (restored_) return;
  try {
    restore();
  } catch (const std::exception& e) {
    check_nothrow(CL_OUT_OF_RESOURCES, e.what());
  }
}

Extent AppEvaluator::run_global(const LocalSize& local) const {
  return run_.remainder == Remainder::pad ? padded_global(run_.global, local) : run_.global;
}

void AppEvaluator::restore() {
  for (std::size_t i = 0; i < run_.written.size(); ++i)
    WSTUNE_CL_CHECK(
        clEnqueueCopyBuffer(queue_(), snapshots_[i](), run_.written[i].buffer, 0, 0, bytes_[i], 0, nullptr, nullptr));
  WSTUNE_CL_CHECK(clFinish(queue_()));
  restored_ = true;
}

// Why `local` cannot run ("" when it can); sets the __local arguments for it.
std::string AppEvaluator::refuse(const LocalSize& local) {
  if (local && run_.remainder == Remainder::non_uniform) {
    for (unsigned d = 0; d < run_.global.dims; ++d)
      if ((*local)[d] > run_.global[d])
        return fmt::format("local size {} exceeds the NDRange {}", to_string(local), to_string(run_.global));
  }
  if (!run_.local_args) return {};
  if (!run_.local_args(run_.kernel, local))
    return fmt::format("the app's local_args setter refused {}", to_string(local));
  cl_ulong need = 0;
  const cl_device_id dev = queue_device(run_.app_queue);
  const cl_int err = clGetKernelWorkGroupInfo(run_.kernel, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof need, &need, nullptr);
  if (err != CL_SUCCESS) return cl_failure("clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)", err);
  if (run_.device->local_mem_bytes && need > run_.device->local_mem_bytes)
    return fmt::format("needs {} bytes of local memory at {}; the device has {}", need, to_string(local),
                       run_.device->local_mem_bytes);
  return {};
}

cl_int AppEvaluator::run_once(const LocalSize& local, cl_event* event) {
  cl_event ev = nullptr;
  cl_int err = enqueue_ndrange(queue_(), run_.kernel, run_global(local), local, &ev);
  if (err == CL_SUCCESS) err = clWaitForEvents(1, &ev);
  if (ev && (err != CL_SUCCESS || !event))
    clReleaseEvent(ev);
  else if (event)
    *event = ev;
  return err;
}

std::vector<std::vector<unsigned char>> AppEvaluator::read_written() {
  std::vector<std::vector<unsigned char>> out(run_.written.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].resize(bytes_[i]);
    WSTUNE_CL_CHECK(clEnqueueReadBuffer(queue_(), run_.written[i].buffer, CL_TRUE, 0, bytes_[i], out[i].data(), 0,
                                        nullptr, nullptr));
  }
  return out;
}

// From the snapshot, one run of `local`, outputs against the reference:
// "" when they match, else why (and `status` says runtime or correctness).
std::string AppEvaluator::verify(const LocalSize& local, TrialStatus& status) {
  restore();
  restored_ = false;
  status = TrialStatus::runtime;
  if (const cl_int err = run_once(local, nullptr); err != CL_SUCCESS) return cl_failure("clEnqueueNDRangeKernel", err);
  status = TrialStatus::correctness;
  const auto out = read_written();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!outputs_match(out[i].data(), reference_[i].data(), bytes_[i], run_.written[i].element, run_.tolerance))
      return fmt::format("argument {} differs from the reference run's output", run_.written[i].index);
  }
  status = TrialStatus::correct;
  return {};
}

Trial AppEvaluator::evaluate(const Configuration& config, const TimingOptions& timing) {
  const LocalSize& local = config.local;  // an app's kernel has no tuning parameters
  Trial t;
  t.local = local;
  if (const Extent g = run_global(local); g != run_.global) t.global = g;
  const auto t0 = std::chrono::steady_clock::now();
  auto fail = [&](TrialStatus s, std::string why) {
    t.status = s;
    t.error = std::move(why);
    t.kernel.ms.clear();
    t.run_wall_ms = t.wall_ms = ms_since(t0);
    return t;
  };
  if (std::string why = refuse(local); !why.empty()) return fail(TrialStatus::constraints, why);
  unsigned warmup = timing.warmup;
  if (verified_.insert(to_string(local)).second) {
    TrialStatus status = TrialStatus::correct;
    if (std::string why = verify(local, status); !why.empty()) return fail(status, why);
    t.verified = true;
    warmup = warmup > 0 ? warmup - 1 : 0;  // the verification run warmed it
  }
  double sum = 0;
  for (unsigned i = 0; i < warmup || timing.more(t.kernel.size(), sum, t.kernel.relative_iqr()); ++i) {
    cl_event ev = nullptr;
    if (const cl_int err = run_once(local, &ev); err != CL_SUCCESS)
      return fail(TrialStatus::runtime, cl_failure("clEnqueueNDRangeKernel", err));
    const cl::Event event(ev, false);
    if (i < warmup) continue;
    t.kernel.ms.push_back(event_span_ms(event, event));
    sum += t.kernel.ms.back();
  }
  t.run_wall_ms = t.wall_ms = ms_since(t0);
  return t;
}

std::vector<Samples> AppEvaluator::interleave(const std::vector<LocalSize>& configs, unsigned rounds,
                                              unsigned min_rounds, std::chrono::milliseconds limit) {
  std::vector<Samples> out(configs.size());
  std::vector<bool> failed(configs.size(), false);
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned r = 0; r < rounds; ++r) {
    if (r >= min_rounds && std::chrono::steady_clock::now() - t0 > limit) break;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      const std::size_t i = (k + r) % configs.size();
      cl_event ev = nullptr;
      if (failed[i] || !refuse(configs[i]).empty() || run_once(configs[i], &ev) != CL_SUCCESS) {
        failed[i] = true;
        out[i].ms.clear();
        continue;
      }
      const cl::Event event(ev, false);
      out[i].ms.push_back(event_span_ms(event, event));
    }
  }
  return out;
}

}  // namespace wstune::detail
