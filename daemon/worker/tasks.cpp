#include "worker/tasks.hpp"

#include <optional>
#include <set>

#include <fmt/format.h>

#include "format/trial_json.hpp"
#include "search/search.hpp"
#include "session/tune_request.hpp"
#include "split/multi_device.hpp"
#include "split/split.hpp"
#include "store/calibration_row.hpp"
#include "wstune/error.hpp"

namespace wstune::daemon {

using nlohmann::json;

namespace {

// The library's search measures through an Evaluator; this one runs the
// block already uploaded to the worker's DeviceRunner (no rebuild, no second
// copy of the data). With a `reference` (a whole problem; empty: none) every correct
// trial is also verified against the CPU reference.
class BlockEvaluator final : public Evaluator {
 public:
  BlockEvaluator(DeviceRunner& runner, const Problem& p, const Block& b, std::vector<HostBuffer> reference,
                 const ReferenceChoice& choice = {}, TrialEnergy energy = TrialEnergy())
      : runner_(runner),
        p_(p),
        b_(b),
        reference_(std::move(reference)),
        target_(reference_target(runner, p, b, choice)),
        energy_(std::move(energy)) {
    energy_.describe(target_);
  }
  const TuneTarget& target() const override { return target_; }
  // Built when first asked: a worker that measures what the master sends
  // (Tag::trial, the configurations of the master's one space) never builds it.
  const SearchSpace& space() const override {
    if (!space_) space_ = make_search_space(runner_.spec(), p_, b_, target_);
    return *space_;
  }
  // make_tune_target() with the reference reference_outputs() took (apply_reference()).
  static TuneTarget reference_target(DeviceRunner& runner, const Problem& p, const Block& b,
                                     const ReferenceChoice& choice) {
    TuneTarget t = make_tune_target(runner, p, b);
    apply_reference(t, runner.spec(), p, b, choice);
    return t;
  }
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override {
    const auto t0 = std::chrono::steady_clock::now();
    const Problem p = with_params(p_, config.params);
    RunResult r = runner_.run(p, b_, config.local, timing);
    Trial t;
    t.params = config.params;
    t.local = config.local;
    t.status = r.status;
    t.error = r.error;
    t.kernel = std::move(r.kernel);
    t.run_wall_ms = r.wall_ms;
    t.compile_ms = r.compile_ms;
    if (r.ok() && !(r.global == target_.global)) t.global = r.global;
    if (r.ok() && !reference_.empty()) {
      const Verdict v = verify_outputs(runner_.spec(), p, b_, r.outputs, reference_);
      t.verified = true;
      if (!v.ok) {
        t.status = TrialStatus::correctness;
        t.error = verification_error(v);
      }
    }
    // A configuration's first correct trial, as TrialRunner::run() observes.
    if (t.ok() && energy_.active() && observed_.insert(config.key()).second)
      t.energy = energy_.observe(runner_, p, b_, config.local, t.median_ms());
    t.wall_ms = ms_since(t0);
    return t;
  }

 private:
  DeviceRunner& runner_;
  Problem p_;
  Block b_;
  std::vector<HostBuffer> reference_;  // empty: no verification
  TuneTarget target_;
  TrialEnergy energy_;
  std::set<std::string> observed_;  // configuration keys whose energy was observed
  mutable std::optional<SearchSpace> space_;
};

// The search of `spec` over `ev` resolved as `wstune tune` resolves it
// without options but the budget (resolve_search(): a tuning file's Search
// and Budget, else auto and its default): the block's size is resolved
// already.
json search(Evaluator& ev, const KernelSpec& spec, unsigned repetitions, unsigned max_trials) {
  TuneRequest request;
  request.max_evals = max_trials;
  const ResolvedSearch resolved = resolve_search(spec, request);
  auto searcher = resolved.searcher();
  auto stop = resolved.budget(spec, ev.space()).stop();
  TuneOptions opt;
  opt.timing = TimingOptions{1, std::max(1u, repetitions)};
  const TuneResult res = tune(ev, *searcher, *stop, opt);
  json trials = json::array();
  for (const auto& t : res.trials) trials.push_back(trial_report_json(t));
  return json{{"strategy", res.strategy},
              {"global", to_string(res.target.global)},
              {"trials", trials},
              {"best", trial_report_json(res.best)},
              {"null_ms", res.baseline.ok() ? json(res.baseline.median_ms()) : json(nullptr)},
              {"rule", res.rule ? to_string(res.rule->local) : "null"},
              {"rule_ms", res.rule && res.rule->ok() ? json(res.rule->median_ms()) : json(nullptr)},
              {"evaluations", res.evaluations},
              {"stop_reason", res.stop_reason},
              {"wall_ms", res.wall_ms}};
}

}  // namespace

LocalSize rule_local(const DeviceRunner& runner, const Problem& p, const Block& b) {
  return paper_local_rule(runner, p, b);
}

json tune_block(DeviceRunner& runner, const Problem& p, const Block& b, unsigned repetitions, unsigned max_trials) {
  BlockEvaluator ev(runner, p, b, {});
  return search(ev, runner.spec(), repetitions, max_trials);
}

std::unique_ptr<Evaluator> whole_evaluator(DeviceRunner& runner, const Problem& p, std::uint64_t seed,
                                           TrialEnergy energy) {
  const KernelSpec& spec = runner.spec();
  const Block whole = spec.whole(p);
  const auto inputs = spec.generate_inputs(p, seed);
  ReferenceChoice choice;
  std::vector<HostBuffer> reference = reference_outputs(runner, p, inputs, &choice);
  const Problem rp = choice.params.empty() ? p : with_params(p, choice.params);  // the reference that ran
  runner.upload(rp, whole, spec.block_inputs(rp, inputs, whole));
  return std::make_unique<BlockEvaluator>(runner, rp, whole, std::move(reference), choice, std::move(energy));
}

json calibrate_device(DeviceRunner& runner, const Problem& p, const std::vector<HostBuffer>& inputs, unsigned dim,
                      unsigned repetitions, const CalibrationBudget& budget) {
  const auto t0 = std::chrono::steady_clock::now();
  CalibrationRow row;
  row.device =
      calibrate_alone(runner, p, inputs, dim, std::nullopt, TimingOptions{1, std::max(1u, repetitions)}, budget);
  const std::size_t total = runner.spec().split_units(p, dim);
  const double full = slice_work_items(runner.spec(), p, dim, total);
  row.summary = CalibrationSummary{budget.max_slice_ms, total, full, row.device.predict_ms(full), ms_since(t0)};
  return to_json(row);
}

}  // namespace wstune::daemon
