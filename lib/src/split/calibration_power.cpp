// A device's idle and active power for the energy-aware split (multi_device.hpp).
#include <thread>

#include "observe/observer.hpp"
#include "split/multi_device.hpp"
#include "wstune/error.hpp"

namespace wstune {

void measure_power(DeviceRunner& runner, const Problem& p, const Block& b, const LocalSize& local, double kernel_ms,
                   DeviceCalibration& c) {
  const EnergyOptions options;
  auto choice = make_energy_observer(runner.device(), options);
  if (!choice.observer) return;
  EnergyObserver& o = *choice.observer;
  const double window = window_ms(o, options);
  try {
    const auto idle = observe_window(
        o, 0, 0, [&] { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(window)); });
    TimingOptions back_to_back;
    back_to_back.warmup = 0;
    back_to_back.repetitions = window_runs(window, kernel_ms);
    back_to_back.steady_warmup = 0;
    bool ran = false;
    const auto active = observe_window(o, back_to_back.repetitions, kernel_ms,
                                       [&] { ran = runner.run(p, b, local, back_to_back, false).ok(); });
    if (!ran) return;
    c.idle_w = idle.power_w;
    c.active_w = active.power_w;
  } catch (const Error&) {  // a counter that stops answering: no power
  }
}

}  // namespace wstune
