// Tuner::build_best: a tuning file's kernel built with the parameter chain's configuration.
#include "app/build_best.hpp"

#include <fmt/format.h>

#include "app/build_best_online.hpp"
#include "session/best_configuration.hpp"
#include "session/tune_request.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace wstune::detail {

namespace {

cl::NDRange ndrange_of(const Extent& e) {
  if (e.dims == 1) return {e.x};
  if (e.dims == 2) return {e.x, e.y};
  return {e.x, e.y, e.z};
}

}  // namespace

BuiltKernel BestKernelBuilder::build(Store& store, const LookupOptions& options, const BuildBestOnline& online,
                                     const DeviceInfo& device, cl_command_queue queue, const std::string& tuning_file,
                                     const std::string& size) {
  auto& spec_ptr = specs_[tuning_file];
  if (!spec_ptr) spec_ptr = load_tuning_file(tuning_file);
  const KernelSpec& spec = *spec_ptr;
  const Problem p = resolve_problem(spec, size);
  StoredConfiguration best = best_configuration(&store, spec, p, device, options);
  BuiltKernel out;
  // Online tuning, once per device, file and size in this Tuner, when nothing exact is stored.
  if (online.enabled && best.level != LookupLevel::exact &&
      tried_online_.try_emplace(fmt::format("{}\x1f{}\x1f{}", device.fingerprint(), tuning_file, p.text), true)
          .second) {
    const OnlineParamsTuning tuned = tune_parameters_online(store, spec, p, device, online);
    out.tuned_evaluations = tuned.evaluations;
    best = best_configuration(&store, spec, p, device, options);
    if (best.level == LookupLevel::exact) {
      best.level = LookupLevel::online;
    } else {
      out.note = fmt::format("{}; level {} answered instead",
                             tuned.note.empty() ? "online tuning stored no best for this device and size" : tuned.note,
                             to_string(best.level));
    }
  }
  const Problem run = with_params(p, best.config.params);

  const cl::CommandQueue q(queue, true);
  const auto context = q.getInfo<CL_QUEUE_CONTEXT>();
  const auto dev = q.getInfo<CL_QUEUE_DEVICE>();
  const ProgramSource source = program_source(spec, run, device, false);
  const std::string key =
      fmt::format("{}\x1f{}\x1f{}", static_cast<const void*>(dev()), static_cast<const void*>(context()), source.key());
  auto [it, fresh] = programs_.try_emplace(key);
  if (fresh) {
    build_program(context, dev, spec, source, it->second);
    out.compile_ms = it->second.info.compile_ms;
    out.compiled = !it->second.info.from_cache;
  }
  const BuiltProgram& built = it->second;
  if (!built.error.empty()) {
    const BuiltProgram failed = built;
    programs_.erase(it);  // a later call tries again
    if (failed.code != CL_SUCCESS) throw BuildError(failed.call, failed.code, failed.log);
    throw Error(failed.error);
  }
  out.program = built.program;
  // A kernel object of its own per call: the app sets its arguments.
  cl_int err = CL_SUCCESS;
  out.kernel = cl::Kernel(built.program, std::string(spec.entry_point()).c_str(), &err);
  check(err, "clCreateKernel");
  const LocalSize& local = best.config.local;
  Extent global = spec.global_size(run);
  if (spec.guards_bounds()) global = padded_global(global, local);
  out.global = ndrange_of(global);
  out.local = local ? ndrange_of(*local) : cl::NullRange;
  out.level = best.level;
  out.params = best.config.params.dump();
  out.build_options = source.options;
  if (best.level == LookupLevel::exact || best.level == LookupLevel::online || best.level == LookupLevel::nearest ||
      best.level == LookupLevel::architecture || best.level == LookupLevel::vendor_type)
    out.from = best.row;
  out.distance = best.distance;
  return out;
}

}  // namespace wstune::detail
