// The C API (wstune/wstune.h) over wstune::Tuner.
#include "observe/observer.hpp"
#include "wstune/wstune.h"

#include <chrono>
#include <map>
#include <memory>
#include <new>
#include <string>

#include "session/autotune.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"
#include "wstune/tuner.hpp"
#include "wstune/version.hpp"

struct wstune_tuner {
  std::unique_ptr<wstune::Tuner> tuner;
  std::map<cl_kernel, wstune::KernelOptions> options;  // what the C calls set, per kernel
  std::string level;                                   // the last answer's level
  std::string params, build_options, note;             // the last wstune_build_best()'s strings
  // The last wstune_autotune()'s strings.
  std::string best_params, energy_sensor, objective, objective_note;
};

namespace {

thread_local std::string last_error;

// Runs `f`, turning exceptions into status codes and this thread's message.
template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    return WSTUNE_SUCCESS;
  } catch (const wstune::ClError& e) {
    last_error = e.what();
    return e.code();
  } catch (const wstune::UsageError& e) {
    last_error = e.what();
    return WSTUNE_USAGE_ERROR;
  } catch (const wstune::StoreError& e) {
    last_error = e.what();
    return WSTUNE_STORE_ERROR;
  } catch (const std::exception& e) {
    last_error = e.what();
    return WSTUNE_OTHER_ERROR;
  } catch (...) {
    last_error = "unknown error";
    return WSTUNE_OTHER_ERROR;
  }
}

void need(const void* p, const char* what) {
  if (!p) throw wstune::UsageError(std::string(what) + " is NULL; pass a valid handle");
}

wstune::Extent extent(cl_uint work_dim, const size_t* global) {
  need(global, "global");
  if (work_dim < 1 || work_dim > 3)
    throw wstune::UsageError("work_dim " + std::to_string(work_dim) + ": an NDRange has 1 to 3 dimensions");
  return wstune::Extent{global[0], work_dim > 1 ? global[1] : 1, work_dim > 2 ? global[2] : 1, work_dim};
}

wstune_tuner* open_tuner(const char* db_path, wstune::TunerOptions o) {
  wstune_tuner* out = nullptr;
  guarded([&] {
    auto t = std::make_unique<wstune_tuner>();
    t->tuner = std::make_unique<wstune::Tuner>(db_path ? db_path : "", std::move(o));
    out = t.release();
  });
  return out;
}

// Updates `k`'s options through `change` and hands them to the tuner.
template <class F>
int with_options(wstune_tuner* t, cl_kernel k, F&& change) {
  return guarded([&] {
    need(t, "tuner");
    need(k, "kernel");
    wstune::KernelOptions& o = t->options[k];
    change(o);
    t->tuner->set_kernel_options(k, o);
  });
}

std::string text(const char* s) {
  return s ? std::string(s) : std::string();
}

// The autotune() options of `o` for `spec`; a bad objective or energy is a
// UsageError naming the field.
wstune::AutotuneOptions autotune_options(const wstune_autotune_options& o) {
  wstune::AutotuneOptions a;
  if (!text(o.device).empty()) a.device = o.device;
  const std::string energy = text(o.energy).empty() ? "auto" : o.energy;
  if (!wstune::is_energy_mode(energy))
    throw wstune::UsageError("wstune_autotune_options.energy '" + energy +
                             "': give auto (observe when an objective needs energy), on (always, where a sensor is) "
                             "or off");
  a.energy = wstune::energy_options_of(energy);
  return a;
}

// The search wstune_autotune() asks of `spec`.
wstune::ResolvedTune autotune_request(const wstune::KernelSpec& spec, const wstune_autotune_options& o) {
  wstune::TuneRequest req;
  req.size = text(o.size);
  req.strategy = text(o.strategy);
  req.max_evals = o.max_trials;
  req.time_limit_s = o.max_time_s;
  req.objectives = text(o.objective);
  if (!req.objectives.empty())  // the field's name in the error, not the CLI's
    (void)wstune::parse_objectives(req.objectives, wstune::MetricSet(spec, wstune::Problem{}),
                                   "wstune_autotune_options.objective");
  return wstune::resolve_tune(spec, req);
}

// The best of `r` into `out`, its strings kept in `t`.
void autotune_answer(wstune_tuner* t, const wstune::AutotuneResult& r, const wstune::ResolvedTune& request,
                     wstune_autotune_result* out) {
  const wstune::Trial& best = r.result.best;
  if (!best.ok())
    throw std::runtime_error("no configuration ran correctly (" + best.error + "); see `wstune show` for the trials");
  wstune_autotune_result a{};
  t->best_params = best.params.dump();
  t->energy_sensor = r.result.target.energy_sensor;
  t->objective = wstune::to_string(request.search.objectives.front());
  t->objective_note = r.objective_note;
  a.params = t->best_params.c_str();
  a.work_dim = static_cast<cl_uint>(r.result.target.global.dims);
  for (cl_uint d = 0; d < a.work_dim && d < 3; ++d) a.local[d] = best.local ? (*best.local)[d] : 0;
  a.time_ms = best.median_ms();
  a.energy_measured = best.energy ? 1 : 0;
  a.energy_j = best.energy ? best.energy->energy_j : 0;
  a.power_w = best.energy ? best.energy->power_w : 0;
  a.energy_sensor = t->energy_sensor.c_str();
  a.objective = t->objective.c_str();
  a.objective_note = t->objective_note.c_str();
  a.evaluations = r.result.evaluations;
  *out = a;
}

}  // namespace

extern "C" {

void wstune_autotune_defaults(wstune_autotune_options* options) {
  if (options) *options = wstune_autotune_options{};
}

int wstune_autotune(wstune_tuner* t, const char* tuning_file, const wstune_autotune_options* options,
                    wstune_autotune_result* out) {
  return guarded([&] {
    need(t, "tuner");
    need(tuning_file, "tuning_file");
    need(out, "out");
    const wstune_autotune_options o = options ? *options : wstune_autotune_options{};
    const auto spec = wstune::load_tuning_file(tuning_file);
    const wstune::ResolvedTune request = autotune_request(*spec, o);
    const wstune::AutotuneResult r = wstune::autotune(*spec, request, &t->tuner->store(), autotune_options(o));
    autotune_answer(t, r, request, out);
  });
}

wstune_tuner* wstune_open(const char* db_path) {
  return open_tuner(db_path, {});
}

wstune_tuner* wstune_open_online(const char* db_path, unsigned max_trials, unsigned max_time_ms) {
  wstune::TunerOptions o;
  o.tune_online = true;
  if (max_trials) o.online_max_trials = max_trials;
  if (max_time_ms) o.online_max_time = std::chrono::milliseconds(max_time_ms);
  return open_tuner(db_path, std::move(o));
}

int wstune_local_size(wstune_tuner* t, cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t* global,
                      size_t* local) {
  return guarded([&] {
    need(t, "tuner");
    need(local, "local");
    const wstune::LookupResult r = t->tuner->lookup(q, k, extent(work_dim, global));
    t->level = wstune::to_string(r.level);
    for (cl_uint d = 0; d < work_dim; ++d) local[d] = r.local ? (*r.local)[d] : 0;
  });
}

int wstune_launch(wstune_tuner* t, cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t* global,
                  cl_event* event) {
  return guarded([&] {
    need(t, "tuner");
    t->level = wstune::to_string(t->tuner->launch(q, k, extent(work_dim, global), event).level);
  });
}

int wstune_tune(wstune_tuner* t, cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t* global) {
  return guarded([&] {
    need(t, "tuner");
    t->level = wstune::to_string(t->tuner->tune(q, k, extent(work_dim, global)).level);
  });
}

int wstune_build_best(wstune_tuner* t, cl_command_queue q, const char* tuning_file, const char* size,
                      wstune_built_kernel* out) {
  return guarded([&] {
    need(t, "tuner");
    need(q, "queue");
    need(tuning_file, "tuning_file");
    need(out, "out");
    const wstune::BuiltKernel b = t->tuner->build_best(q, tuning_file, size ? size : "");
    wstune_built_kernel r{};
    r.work_dim = static_cast<cl_uint>(b.global.dimensions());
    for (cl_uint d = 0; d < r.work_dim; ++d) {
      r.global[d] = b.global[d];
      r.local[d] = b.local.dimensions() ? b.local[d] : 0;
    }
    t->level = std::string(wstune::to_string(b.level));
    t->params = b.params;
    t->build_options = b.build_options;
    r.level = t->level.c_str();
    r.params = t->params.c_str();
    r.build_options = t->build_options.c_str();
    r.compile_ms = b.compile_ms;
    r.compiled = b.compiled ? 1 : 0;
    r.tuned_evaluations = b.tuned_evaluations;
    t->note = b.note;
    r.note = t->note.c_str();
    wstune::check(clRetainProgram(b.program()), "clRetainProgram");
    if (const cl_int err = clRetainKernel(b.kernel()); err != CL_SUCCESS) {
      clReleaseProgram(b.program());  // nothing is handed out on an error
      wstune::check(err, "clRetainKernel");
    }
    r.program = b.program();
    r.kernel = b.kernel();
    *out = r;
  });
}

const char* wstune_last_level(const wstune_tuner* t) {
  return t ? t->level.c_str() : "";
}

int wstune_set_build_best_online(wstune_tuner* t, int enable, unsigned max_evals, unsigned max_time_ms) {
  return guarded([&] {
    need(t, "tuner");
    t->tuner->set_build_best_online(
        wstune::BuildBestOnline{enable != 0, max_evals, std::chrono::milliseconds(max_time_ms)});
  });
}

void wstune_program_builds(unsigned long long* compiled, unsigned long long* from_binary) {
  const wstune::ProgramBuilds b = wstune::program_builds();
  if (compiled) *compiled = b.compiled;
  if (from_binary) *from_binary = b.from_binary;
}

int wstune_set_trials_per_launch(wstune_tuner* t, unsigned trials) {
  return guarded([&] {
    need(t, "tuner");
    t->tuner->set_online_trials_per_launch(trials);
  });
}

int wstune_set_arg_buffer(wstune_tuner* t, cl_kernel k, cl_uint index, cl_mem buffer) {
  return guarded([&] {
    need(t, "tuner");
    t->tuner->set_arg(k, index, buffer);
  });
}

int wstune_set_bounds_guarded(wstune_tuner* t, cl_kernel k, int guarded_flag) {
  return with_options(t, k, [&](wstune::KernelOptions& o) { o.bounds_guarded = guarded_flag != 0; });
}

int wstune_set_local_args(wstune_tuner* t, cl_kernel k, wstune_local_args_fn fn, void* user) {
  return with_options(t, k, [&](wstune::KernelOptions& o) {
    if (!fn) {
      o.local_args = nullptr;
      return;
    }
    o.local_args = [fn, user](cl_kernel kernel, const wstune::LocalSize& local) {
      const size_t l[3] = {local ? local->x : 0, local ? local->y : 0, local ? local->z : 0};
      return fn(kernel, local ? local->dims : 0, local ? l : nullptr, user) != 0;
    };
  });
}

int wstune_set_written_args(wstune_tuner* t, cl_kernel k, cl_uint count, const cl_uint* indices) {
  return with_options(t, k, [&](wstune::KernelOptions& o) {
    if (count) need(indices, "indices");
    o.written_args = std::vector<cl_uint>(indices, indices + count);
  });
}

void wstune_forget(wstune_tuner* t, cl_kernel k) {
  if (!t) return;
  t->options.erase(k);
  t->tuner->forget(k);
}

void wstune_close(wstune_tuner* t) {
  delete t;
}

const char* wstune_last_error(void) {
  return last_error.c_str();
}

const char* wstune_version(void) {
  return wstune::version().data();
}

}  // extern "C"
