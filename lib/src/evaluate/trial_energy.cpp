// A trial's energy observation (trial_energy.hpp).
#include "evaluate/trial_energy.hpp"

#include "wstune/error.hpp"

namespace wstune {

TrialEnergy::TrialEnergy(std::string why_not) : why_not_(std::move(why_not)) {}

TrialEnergy::TrialEnergy(std::shared_ptr<EnergyObserver> observer, std::string why_not, const EnergyOptions& options)
    : observer_(std::move(observer)), why_not_(std::move(why_not)) {
  if (observer_) window_ms_ = window_ms(*observer_, options);
}

TrialEnergy TrialEnergy::open(const Device& device, const EnergyOptions& options) {
  ObserverChoice c = make_energy_observer(device, options);
  return TrialEnergy(std::shared_ptr<EnergyObserver>(std::move(c.observer)), std::move(c.why_not), options);
}

void TrialEnergy::describe(TuneTarget& t) const {
  t.energy_sensor = observer_ ? std::string(observer_->sensor()) : std::string();
  t.energy_note = observer_ ? std::string() : why_not_;
}

std::optional<EnergyMeasurement> TrialEnergy::observe(DeviceRunner& runner, const Problem& p, const Block& b,
                                                      const LocalSize& local, double median_ms) {
  if (!observer_) return std::nullopt;
  TimingOptions back_to_back;
  back_to_back.warmup = 0;
  back_to_back.repetitions = window_runs(window_ms_, median_ms);
  back_to_back.steady_warmup = 0;
  bool ran = false;
  try {
    EnergyMeasurement m = observe_window(*observer_, back_to_back.repetitions, median_ms,
                                         [&] { ran = runner.run(p, b, local, back_to_back, false).ok(); });
    if (ran) return m;
  } catch (const Error&) {  // a counter that stops answering: no energy for this trial
  }
  return std::nullopt;
}

}  // namespace wstune
