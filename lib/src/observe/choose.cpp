// Which observer measures a device's energy (observer.hpp).
#include <filesystem>

#include "observe/nvml.hpp"
#include "observe/observer.hpp"
#include "observe/pci.hpp"
#include "observe/rapl.hpp"
#include "wstune/error.hpp"

namespace wstune {

namespace {

bool nvidia(const DeviceInfo& d) {
  const auto has = [](const std::string& s) { return s.find("NVIDIA") != std::string::npos; };
  return has(d.vendor) || has(d.platform);
}

std::unique_ptr<EnergyObserver> open_observer(const Device& device, const EnergyOptions& options, std::string* why) {
  if (device.info.type == "gpu" && nvidia(device.info)) {
    auto api = load_nvml(why);
    if (!api) return nullptr;
    return std::make_unique<NvmlObserver>(std::move(*api), pci_bus_id(device.device));
  }
  if (device.info.type == "cpu") {
    if (!std::filesystem::exists(options.powercap_root)) {
      *why = "no RAPL (" + options.powercap_root + " is absent)";
      return nullptr;
    }
    return std::make_unique<RaplObserver>(options.powercap_root);
  }
  *why = "no energy sensor known for a " + device.info.type + " of " + device.info.vendor;
  return nullptr;
}

}  // namespace

ObserverChoice make_energy_observer(const Device& device, const EnergyOptions& options) {
  ObserverChoice c;
  if (!options.enabled) {
    c.why_not = options.when_needed ? "no objective needs energy: --energy auto; --energy on observes it"
                                    : "energy observation is off";
    return c;
  }
  try {
    c.observer = open_observer(device, options, &c.why_not);
    if (c.observer) c.observer->set_update_period_ms(measure_update_period(*c.observer));
  } catch (const Error& e) {
    c.observer.reset();
    c.why_not = e.what();
  }
  return c;
}

}  // namespace wstune
