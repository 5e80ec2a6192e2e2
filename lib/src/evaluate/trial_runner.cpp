// The part of an evaluator that owns OpenCL (trial_runner.hpp).
#include "evaluate/trial_runner.hpp"

#include <chrono>

#include "program_cache/program_cache.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {
// Built programs a worker keeps (DeviceRunner::forget_programs()): more than
// tune()'s announcement window (Evaluator::announce_ahead()), which the
// worker builds at once without a pool.
constexpr std::size_t kKeptPrograms = 512;
}  // namespace

TrialRunner::TrialRunner(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& cfg)
    : spec_(spec),
      p_(problem.params.empty() ? with_params(problem, spec.reference_params()) : problem),
      whole_(spec.whole(p_)),
      runner_(select_device(enumerate_devices(), cfg.device), spec, cfg.build_options) {
  const auto inputs = spec.generate_inputs(p_, cfg.seed);
  ReferenceChoice choice;
  ref_ = reference_outputs(runner_, p_, inputs, &choice);
  if (!choice.params.empty()) p_ = with_params(p_, choice.params);  // the baseline runs the reference that ran
  runner_.upload(p_, whole_, spec.block_inputs(p_, inputs, whole_));
  target_ = make_tune_target(runner_, p_, whole_);
  apply_reference(target_, spec, p_, whole_, choice);
  energy_ = TrialEnergy::open(runner_.device(), cfg.energy);
  energy_.describe(target_);
}

void TrialRunner::prepare(const std::vector<Configuration>& upcoming) {
  std::vector<Problem> ps;
  for (const auto& c : upcoming) ps.push_back(with_params(p_, c.params));
  runner_.prebuild(ps);
}

Trial TrialRunner::run(const Configuration& config, const TimingOptions& timing) {
  const Problem p = with_params(p_, config.params);
  const std::string key = config.key();
  const bool verify = !verified_.count(key);  // outputs are read back only to verify them
  RunResult r = runner_.run(p, whole_, config.local, timing, verify);
  Trial t;
  t.params = config.params;
  t.local = config.local;
  if (r.ok() && !(r.global == target_.global)) t.global = r.global;
  t.status = r.status;
  t.error = r.error;
  t.kernel = r.kernel;
  t.run_wall_ms = r.wall_ms;
  t.compile_ms = r.compile_ms;
  if (r.ok() && verify) {
    const auto tv = std::chrono::steady_clock::now();
    const Verdict v = verify_outputs(spec_, p, whole_, r.outputs, ref_);
    runner_.recycle(std::move(r.outputs));
    t.verify_ms = ms_since(tv);
    t.verified = true;
    if (v.ok) {
      verified_.insert(key);
    } else {
      t.status = TrialStatus::correctness;
      t.error = verification_error(v);
    }
  }
  // A configuration's first trial only: the tie rounds' extra trials merge
  // their samples into it and keep its observation (the power of a
  // configuration does not change between its trials; the window costs time).
  if (verify && t.ok()) t.energy = energy_.observe(runner_, p, whole_, config.local, t.median_ms());
  // A bounded number of programs over a long campaign; one needed again (a
  // tie-break round) loads its binary. Without the binary cache that would
  // be a build from source: then all are kept.
  if (ProgramCache::process().enabled()) runner_.forget_programs(kKeptPrograms);
  return t;
}

}  // namespace wstune
