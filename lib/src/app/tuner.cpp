// wstune::Tuner: the run-time API for OpenCL apps (see tuner.hpp, docs/app.md).
#include "wstune/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "app/app_kernel.hpp"
#include "app/build_best.hpp"
#include "app/build_best_online.hpp"
#include "evaluate/app_evaluator.hpp"
#include "evaluate/trial.hpp"
#include "program_cache/program_cache.hpp"
#include "search/search.hpp"
#include "space/rules.hpp"
#include "store/trial_rows.hpp"
#include "wstune/error.hpp"

namespace wstune {

using detail::KernelFacts;
using detail::queue_device;

Extent extent_of(const cl::NDRange& range) {
  const auto dims = static_cast<unsigned>(range.dimensions());
  if (dims < 1 || dims > 3) throw UsageError(fmt::format("an NDRange has 1 to 3 dimensions; this one has {}", dims));
  return Extent{range[0], dims > 1 ? range[1] : 1, dims > 2 ? range[2] : 1, dims};
}

struct Tuner::Impl {
  std::unique_ptr<Store> owned;
  Store* store = nullptr;
  TunerOptions options;
  std::unique_ptr<Lookup> lookup;
  std::map<cl_device_id, DeviceInfo> devices;
  std::map<std::pair<cl_kernel, cl_device_id>, KernelFacts> kernels;
  std::map<cl_kernel, KernelOptions> kernel_options;
  std::map<cl_kernel, std::map<cl_uint, cl_mem>> buffers;
  /// Online tuning of one (device, kernel, global size) in this process.
  struct OnlineProgress {
    std::chrono::milliseconds spent{0};  ///< time of its dynamic steps so far
    bool finished = false;               ///< its session ended: never tuned again here
  };
  std::map<std::string, OnlineProgress> online;  // by device fingerprint, kernel key and global size
  PeOverrides overrides = PeOverrides::from_environment();
  detail::BestKernelBuilder best_kernels;  // build_best()

  const KernelOptions& opts(cl_kernel k) {
    static const KernelOptions none;
    auto it = kernel_options.find(k);
    return it == kernel_options.end() ? none : it->second;
  }
  Remainder remainder(cl_kernel k, const KernelFacts& f) {
    if (f.non_uniform) return Remainder::non_uniform;
    return opts(k).bounds_guarded ? Remainder::pad : Remainder::divide;
  }
  KernelFit fit(cl_kernel k, const KernelFacts& f) { return {f.max_items, remainder(k, f)}; }
  detail::AppRun app_run(cl_command_queue q, cl_kernel k, const Extent& global, const DeviceInfo& dev,
                         const KernelFacts& f);
  std::vector<detail::WrittenArg> written(cl_kernel k, const KernelFacts& f);
  void record_best(const SessionRecord& s, const TuneResult& res, detail::AppEvaluator& ev);
  Extent ready(cl_kernel k, const Extent& global, const LookupResult& r, const DeviceInfo& dev, const KernelFacts& f);
  /// An online step's answer (the fastest correct configuration so far, level
  /// online; none when the session ended or nothing ran correctly yet) and
  /// whether the session ended.
  struct OnlineStep {
    std::optional<LookupResult> answer;
    bool finished = false;
  };
  OnlineStep online_step(cl_command_queue queue, cl_kernel kernel, const Extent& global, const DeviceInfo& dev,
                         const KernelFacts& f, unsigned max_new, std::chrono::milliseconds time_left);
  std::optional<LookupResult> dynamic_step(cl_command_queue queue, cl_kernel kernel, const Extent& global,
                                           const DeviceInfo& dev, const KernelFacts& f, OnlineProgress& progress,
                                           unsigned per_launch);
};

// A launch's share of dynamic tuning (TunerOptions::online_trials_per_launch):
// one online step within what is left of the session's time in this process.
std::optional<LookupResult> Tuner::Impl::dynamic_step(cl_command_queue queue, cl_kernel kernel, const Extent& global,
                                                      const DeviceInfo& dev, const KernelFacts& f,
                                                      OnlineProgress& progress, unsigned per_launch) {
  const auto left = std::max(std::chrono::milliseconds(0), options.online_max_time - progress.spent);
  const auto t0 = std::chrono::steady_clock::now();
  OnlineStep step = online_step(queue, kernel, global, dev, f, per_launch, left);
  progress.spent += std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  progress.finished = step.finished;
  return step.answer;
}

Tuner::Tuner(const std::string& db_path, TunerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->owned = std::make_unique<Store>(db_path.empty() ? default_db_path() : db_path, options.store);
  impl_->store = impl_->owned.get();
  impl_->lookup = std::make_unique<Lookup>(*impl_->store, options.lookup);
  detail::check_budget(options.build_best_online);
  impl_->options = std::move(options);
}

Tuner::Tuner(Store& store, TunerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->store = &store;
  impl_->lookup = std::make_unique<Lookup>(store, options.lookup);
  detail::check_budget(options.build_best_online);
  impl_->options = std::move(options);
}

Tuner::~Tuner() = default;

Store& Tuner::store() const noexcept {
  return *impl_->store;
}
Lookup& Tuner::lookup_chain() const noexcept {
  return *impl_->lookup;
}

void Tuner::set_kernel_options(cl_kernel kernel, KernelOptions options) {
  impl_->kernel_options[kernel] = std::move(options);
}

void Tuner::set_arg(cl_kernel kernel, cl_uint index, cl_mem buffer) {
  WSTUNE_CL_CHECK(clSetKernelArg(kernel, index, sizeof(cl_mem), &buffer));
  impl_->buffers[kernel][index] = buffer;
}

void Tuner::set_arg(const cl::Kernel& kernel, cl_uint index, const cl::Buffer& buffer) {
  set_arg(kernel(), index, buffer());
}

void Tuner::forget(cl_kernel kernel) {
  impl_->kernel_options.erase(kernel);
  impl_->buffers.erase(kernel);
  std::erase_if(impl_->kernels, [&](const auto& kv) { return kv.first.first == kernel; });
}

BuiltKernel Tuner::build_best(cl_command_queue queue, const std::string& tuning_file, const std::string& size) {
  return impl_->best_kernels.build(*impl_->store, impl_->options.lookup, impl_->options.build_best_online,
                                   device_info(queue), queue, tuning_file, size);
}

BuiltKernel Tuner::build_best(const cl::CommandQueue& queue, const std::string& tuning_file, const std::string& size) {
  return build_best(queue(), tuning_file, size);
}

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

namespace {
const KernelFacts& facts_of(std::map<std::pair<cl_kernel, cl_device_id>, KernelFacts>& cache, cl_kernel k,
                            cl_device_id d, const DeviceInfo& info) {
  auto it = cache.find({k, d});
  if (it == cache.end()) it = cache.emplace(std::pair{k, d}, detail::kernel_facts(k, d, info)).first;
  return it->second;
}

bool answers_without_tuning(LookupLevel l) {
  return l == LookupLevel::required || l == LookupLevel::forced || l == LookupLevel::exact || l == LookupLevel::nearest;
}
}  // namespace

const KernelKey& Tuner::kernel_key(cl_command_queue queue, cl_kernel kernel) {
  return facts_of(impl_->kernels, kernel, queue_device(queue), device_info(queue)).key;
}

LookupResult Tuner::lookup(cl_command_queue queue, cl_kernel kernel, const Extent& global) {
  const DeviceInfo& dev = device_info(queue);
  const KernelFacts& f = facts_of(impl_->kernels, kernel, queue_device(queue), dev);
  if (global.dims < 1 || global.dims > 3 || global.count() == 0)
    throw UsageError(
        fmt::format("kernel {}: global size {} is not a 1-, 2- or 3-D NDRange of ≥ 1 work-item per "
                    "dimension",
                    f.key.name, to_string(global)));
  if (LocalSize req = f.required_local(global.dims)) return {req, LookupLevel::required, {}, 0};
  return impl_->lookup->find(dev, f.key, global, impl_->fit(kernel, f));
}

LocalSize Tuner::local_size(cl_command_queue queue, cl_kernel kernel, const Extent& global) {
  return lookup(queue, kernel, global).local;
}

LocalSize Tuner::local_size(const cl::CommandQueue& queue, const cl::Kernel& kernel, const cl::NDRange& global) {
  return local_size(queue(), kernel(), extent_of(global));
}

std::vector<detail::WrittenArg> Tuner::Impl::written(cl_kernel k, const KernelFacts& f) {
  const std::string& name = f.key.name;
  const KernelOptions& o = opts(k);
  if (!f.arg_info && !o.written_args)
    throw UsageError(
        fmt::format("kernel {}: the driver gives no argument info, so wstune cannot tell which buffers "
                    "it writes; build the program with -cl-kernel-arg-info or set "
                    "KernelOptions::written_args",
                    name));
  std::vector<cl_uint> indices;
  if (o.written_args) indices = *o.written_args;
  for (cl_uint i = 0; !o.written_args && i < f.args.size(); ++i)
    if (f.args[i].written()) indices.push_back(i);
  std::vector<detail::WrittenArg> out;
  for (cl_uint i : indices) {
    const std::string arg =
        i < f.args.size() ? fmt::format("{} ({} {})", i, f.args[i].type, f.args[i].name) : std::to_string(i);
    auto b = buffers[k].find(i);
    if (i >= f.num_args || b == buffers[k].end())
      throw UsageError(
          fmt::format("kernel {}: argument {} may be written; pass its buffer with Tuner::set_arg(kernel, "
                      "{}, buffer) (C: wstune_set_arg_buffer) so online tuning can restore it, or "
                      "declare it const",
                      name, arg, i));
    const std::string type = i < f.args.size() ? f.args[i].type : "";
    const char element = type.starts_with("float*") ? 'f' : type.starts_with("double*") ? 'd' : 'b';
    out.push_back({i, b->second, element});
  }
  return out;
}

detail::AppRun Tuner::Impl::app_run(cl_command_queue q, cl_kernel k, const Extent& global, const DeviceInfo& dev,
                                    const KernelFacts& f) {
  const KernelOptions& o = opts(k);
  for (cl_uint i = 0; i < f.args.size(); ++i) {
    if (f.args[i].writable_image)
      throw UsageError(
          fmt::format("kernel {}: argument {} ({}) is a writable image; online tuning restores buffers "
                      "only: tune it offline (wstune tune) or copy the image yourself",
                      f.key.name, i, f.args[i].name));
    if (f.args[i].address == CL_KERNEL_ARG_ADDRESS_LOCAL && !o.local_args)
      throw UsageError(
          fmt::format("kernel {}: argument {} ({}) is __local and wstune cannot size it for other local "
                      "sizes; set KernelOptions::local_args (Tuner::set_kernel_options, C: "
                      "wstune_set_local_args) or give the kernel reqd_work_group_size",
                      f.key.name, i, f.args[i].name));
  }
  return detail::AppRun{q, k, global, remainder(k, f), &dev, &f, written(k, f), o.local_args, o.tolerance};
}

// The final interleaved rounds decide: NULL and the fastest correct shapes
// of the search, once each per round; the stored medians are these rounds'.
void Tuner::Impl::record_best(const SessionRecord& s, const TuneResult& res, detail::AppEvaluator& ev) {
  std::vector<const Trial*> ok;
  for (const Trial& t : res.trials)
    if (t.ok() && t.local && t.kernel.size()) ok.push_back(&t);
  std::sort(ok.begin(), ok.end(), [](const Trial* a, const Trial* b) { return a->median_ms() < b->median_ms(); });
  std::vector<LocalSize> configs{std::nullopt};
  for (std::size_t i = 0; i < ok.size() && i < options.final_candidates; ++i) configs.push_back(ok[i]->local);
  const auto samples = ev.interleave(configs, options.final_rounds, 5, options.final_max_time);
  ev.restore();
  std::size_t best = 0;
  for (std::size_t i = 1; i < configs.size(); ++i)
    if (samples[i].size() && (!samples[best].size() || samples[i].median() < samples[best].median())) best = i;
  if (!samples[best].size()) return;  // nothing ran: no best
  BestConfig b;
  b.device_fingerprint = s.device_fingerprint;
  b.kernel = s.kernel;
  b.problem = s.problem;
  b.local = configs[best];
  if (const Extent g = ev.run_global(b.local); g != s.problem.global) b.global = g;
  b.median_ms = samples[best].median();
  if (samples[0].size()) b.null_ms = samples[0].median();
  if (res.rule && res.rule->ok() && res.rule->kernel.size()) b.rule_ms = res.rule->median_ms();
  b.session_id = s.id;
  store->record_best(b);
}

// The online search's strategy and seed, chosen here and not by the one
// resolver of a tuning request (session/tune_request.hpp), because online
// tuning is another job: the resolver turns what a user gave for a kernel
// or tuning file (a size text, a strategy, a seed, a budget, the file's
// Search and Budget) into a problem and a search, and a Tuner has none of
// these — it tunes the local size of an app's own cl_kernel at the NDRange
// the app launches, with the budget of TunerOptions (online_max_trials,
// online_max_time), in steps of a few trials per launch that resume from
// the stored trials. Each step builds the searcher again and replays the
// stored trials through TuneOptions::lookup, so the search must be
// deterministic and good within about 12 trials: guided (NULL, the paper's
// rule, then neighbours of the fastest shapes) is, whatever the size of the
// space; "auto" (the CLI's default) would measure a space of up to 16 shapes
// in its order and a large 3-D one by the portfolio, built for 20 or more
// evaluations. docs/app.md and docs/architecture.md say the same.
constexpr std::string_view kOnlineStrategy = "guided";
constexpr std::uint64_t kOnlineSeed = 1;

// One step of an online session: at most `max_new` configurations not yet
// in the session's stored trials, within `time_left`; the step that ends
// the search also runs the final rounds and stores the best. The app's
// buffers hold what they held before when it returns.
Tuner::Impl::OnlineStep Tuner::Impl::online_step(cl_command_queue queue, cl_kernel kernel, const Extent& global,
                                                 const DeviceInfo& dev, const KernelFacts& f, unsigned max_new,
                                                 std::chrono::milliseconds time_left) {
  detail::AppEvaluator evaluator(app_run(queue, kernel, global, dev, f));
  const SessionRecord s = store->open_session(
      dev, f.key, ProblemKey{global, ""},
      SessionSpec{"online", options.online_max_trials, std::chrono::duration<double>(options.online_max_time).count()});
  std::map<std::string, Trial> done;
  for (const TrialRecord& r : store->trials(s.id)) done.emplace(to_string(r.local), from_record(r));

  auto searcher = make_searcher(kOnlineStrategy, kOnlineSeed);
  const unsigned max_trials = options.online_max_trials;
  const unsigned left = max_trials > done.size() ? max_trials - static_cast<unsigned>(done.size()) : 0;
  const unsigned budget = std::min(left, max_new);
  auto stop = either(max_evaluations(budget), time_limit(time_left));
  TuneOptions topt;
  topt.timing = options.online_timing;
  topt.tiebreak_rounds = 0;                    // the final interleaved rounds decide instead
  if (budget < left) topt.confirm_rounds = 0;  // a step: no reruns of stored configurations
  topt.on_trial = [&](const Trial& t, TrialPhase) { store->add_trial(s.id, to_record(t)); };
  topt.lookup = [&](const Configuration& c) -> std::optional<Trial> {
    auto it = done.find(to_string(c.local));
    if (it == done.end()) return std::nullopt;
    return it->second;
  };
  const TuneResult res = wstune::tune(evaluator, *searcher, *stop, topt);
  // Over when the searcher or the time ended the step early, or the step
  // took the session's last trials.
  if (res.evaluations < budget || budget == left) {
    record_best(s, res, evaluator);
    store->end_session(s.id);
    return {std::nullopt, true};
  }
  evaluator.restore();
  if (!res.best.ok() || !res.best.kernel.size()) return {std::nullopt, false};  // nothing correct yet
  return {LookupResult{res.best.local, LookupLevel::online, {}, 0}, false};
}

LookupResult Tuner::tune(cl_command_queue queue, cl_kernel kernel, const Extent& global) {
  const LookupResult before = lookup(queue, kernel, global);  // validates global
  if (before.level == LookupLevel::required) return before;
  const DeviceInfo& dev = device_info(queue);
  const KernelFacts& f = facts_of(impl_->kernels, kernel, queue_device(queue), dev);
  impl_->online_step(queue, kernel, global, dev, f, std::numeric_limits<unsigned>::max(),
                     impl_->options.online_max_time);
  return lookup(queue, kernel, global);
}

void Tuner::set_build_best_online(const BuildBestOnline& online) {
  detail::check_budget(online);
  impl_->options.build_best_online = online;
}

ProgramBuilds program_builds() noexcept {
  const ProgramBuildCounts c = program_build_counts();
  return {c.source, c.binary, c.cached_failure};
}

void Tuner::set_online_trials_per_launch(unsigned n) noexcept {
  impl_->options.online_trials_per_launch = n;
}

// Readies `k` to run answer `r` over `global` (the __local setter, checks)
// and returns the NDRange to enqueue. Throws UsageError when it cannot run.
Extent Tuner::Impl::ready(cl_kernel k, const Extent& global, const LookupResult& r, const DeviceInfo& dev,
                          const KernelFacts& f) {
  const KernelFit kfit = fit(k, f);
  if (!local_fits(r.local, global, dev, kfit))
    throw UsageError(
        fmt::format("kernel {}: its reqd_work_group_size {} does not fit the global size {}; give a "
                    "multiple of it, or declare the kernel bounds_guarded (KernelOptions)",
                    f.key.name, to_string(r.local), to_string(global)));
  const KernelOptions& o = opts(k);
  if (o.local_args && !o.local_args(k, r.local))
    throw UsageError(fmt::format("kernel {}: its local_args setter refused the local size {} ({})", f.key.name,
                                 to_string(r.local), to_string(r.level)));
  if (!o.local_args && !f.local_args().empty() && r.level != LookupLevel::required && r.level != LookupLevel::forced)
    throw UsageError(
        fmt::format("kernel {}: argument {} is __local, sized by the app for one local size; set "
                    "KernelOptions::local_args so wstune can size it for {}, or give the kernel "
                    "reqd_work_group_size",
                    f.key.name, f.local_args().front(), to_string(r.local)));
  return kfit.remainder == Remainder::pad ? padded_global(global, r.local) : global;
}

LookupResult Tuner::launch(cl_command_queue queue, cl_kernel kernel, const Extent& global, cl_event* event) {
  LookupResult r = lookup(queue, kernel, global);
  const DeviceInfo& dev = device_info(queue);
  const KernelFacts& f = facts_of(impl_->kernels, kernel, queue_device(queue), dev);
  if (impl_->options.tune_online && !answers_without_tuning(r.level)) {
    Impl::OnlineProgress& progress =
        impl_->online[fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", dev.fingerprint(), f.key.name, f.key.source_hash,
                                  f.key.build_options, to_string(global))];
    const unsigned per_launch = impl_->options.online_trials_per_launch;
    if (progress.finished) {
      // tuned online here already: the look-up's answer stands
    } else if (per_launch == 0) {
      r = tune(queue, kernel, global);
      progress.finished = true;
    } else {
      const auto online = impl_->dynamic_step(queue, kernel, global, dev, f, progress, per_launch);
      r = online ? *online : lookup(queue, kernel, global);
    }
  }
  const Extent run = impl_->ready(kernel, global, r, dev, f);
  WSTUNE_CL_CHECK(detail::enqueue_ndrange(queue, kernel, run, r.local, event));
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
