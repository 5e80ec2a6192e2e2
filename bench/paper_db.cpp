// bench_paper's store writes (see paper_db.hpp for why this is its own file).
#include "paper_db.hpp"
#include "store/trial_rows.hpp"

#include "session/tune_session.hpp"
#include "wstune/store.hpp"
#include "wstune/tuner.hpp"

namespace wstune::bench {

namespace {
ProblemKey problem_of(const KernelSpec& spec, const Problem& p) {
  return ProblemKey{spec.global_size(p), p.text};
}
}  // namespace

struct PaperDb::Impl {
  std::unique_ptr<Store> store;
};

PaperDb::PaperDb(const std::string& path) : impl_(std::make_unique<Impl>()) {
  if (!path.empty()) impl_->store = std::make_unique<Store>(path);
}
PaperDb::~PaperDb() = default;
bool PaperDb::enabled() const noexcept {
  return impl_->store != nullptr;
}

void PaperDb::record_tune(const DeviceInfo& device, const KernelSpec& spec, const Problem& p, const TuneResult& r) {
  if (!enabled()) return;
  Store& s = *impl_->store;
  const SessionRecord session =
      s.open_session(device, kernel_key(spec), problem_of(spec, p),
                     SessionSpec{r.strategy, static_cast<std::int64_t>(r.evaluations), std::nullopt}, false);
  std::vector<TrialRecord> trials;
  for (const Trial& t : r.trials) trials.push_back(to_record(t));
  s.add_trials(session.id, trials);
  s.end_session(session.id);
  const LocalSize rule = r.rule ? r.rule->local : LocalSize{};
  s.derive_best(session.id, r.rule ? &rule : nullptr);
}

void PaperDb::record_run(const KernelSpec& spec, const Problem& p, const std::string& model, double makespan_ms,
                         const std::vector<PaperShare>& shares, const nlohmann::json& detail) {
  if (!enabled()) return;
  Store& s = *impl_->store;
  SplitRun run;
  run.kernel = kernel_key(spec);
  run.problem = problem_of(spec, p);
  run.model = model;
  run.makespan_ms = makespan_ms;
  run.detail = detail;
  for (const PaperShare& sh : shares) {
    s.put_device(*sh.device);
    run.devices.push_back(SplitShare{sh.device->fingerprint(), sh.share, sh.time_ms});
  }
  s.record_split_run(run);
}

void PaperDb::record_calibration(const DeviceInfo& device, const KernelSpec& spec, const nlohmann::json& params) {
  if (!enabled()) return;
  Store& s = *impl_->store;
  s.put_device(device);
  s.put_calibration(StoredCalibration{device.fingerprint(), kernel_key(spec), "measured", params, ""});
}

}  // namespace wstune::bench
