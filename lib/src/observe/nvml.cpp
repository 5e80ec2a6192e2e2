// An NVIDIA GPU's energy through NVML, loaded at run time (nvml.hpp).
#include "observe/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

namespace {

// Binds NVML's C function `name` to a std::function of the same shape.
template <typename Fn>
bool bind(void* lib, const char* name, std::function<Fn>& out, std::string* why) {
  void* sym = dlsym(lib, name);
  if (!sym) {
    *why = fmt::format("libnvidia-ml.so.1 has no {}", name);
    return false;
  }
  out = reinterpret_cast<Fn*>(sym);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym's contract
  return true;
}

}  // namespace

std::optional<NvmlApi> load_nvml(std::string* why) {
  // The loader's search path first, then where NVIDIA's container toolkit mounts it.
  const char* env = std::getenv("WSTUNE_NVML_LIBRARY");
  void* lib = nullptr;
  for (const char* name : {env, "libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1"})
    if (name && *name && !lib) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = "no NVML (libnvidia-ml.so.1 not found; WSTUNE_NVML_LIBRARY names its path)";
    return std::nullopt;
  }
  NvmlApi api;
  api.library = std::shared_ptr<void>(lib, [](void* l) { dlclose(l); });
  if (!bind(lib, "nvmlInit_v2", api.init, why) || !bind(lib, "nvmlShutdown", api.shutdown, why) ||
      !bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", api.device_by_pci_bus_id, why) ||
      !bind(lib, "nvmlDeviceGetCount_v2", api.device_count, why) ||
      !bind(lib, "nvmlDeviceGetHandleByIndex_v2", api.device_by_index, why) ||
      !bind(lib, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy_mj, why) ||
      !bind(lib, "nvmlDeviceGetPowerUsage", api.power_mw, why) || !bind(lib, "nvmlErrorString", api.error_string, why))
    return std::nullopt;
  return api;
}

namespace {

void check(const NvmlApi& api, int status, const char* call) {
  if (status == 0) return;
  const char* text = api.error_string ? api.error_string(status) : nullptr;
  throw Error(fmt::format("{} failed: {} (NVML status {})", call, text ? text : "unknown error", status));
}

}  // namespace

NvmlObserver::NvmlObserver(NvmlApi api, const std::optional<std::string>& bus_id) : api_(std::move(api)) {
  check(api_, api_.init(), "nvmlInit_v2");
  try {
    if (bus_id) {
      check(api_, api_.device_by_pci_bus_id(bus_id->c_str(), &device_), "nvmlDeviceGetHandleByPciBusId_v2");
    } else {
      unsigned n = 0;
      check(api_, api_.device_count(&n), "nvmlDeviceGetCount_v2");
      if (n != 1)
        throw Error(fmt::format("the OpenCL device has no PCI bus id and NVML sees {} devices: none is chosen", n));
      check(api_, api_.device_by_index(0, &device_), "nvmlDeviceGetHandleByIndex_v2");
    }
    check(api_, api_.total_energy_mj(device_, &start_mj_), "nvmlDeviceGetTotalEnergyConsumption");
  } catch (...) {
    api_.shutdown();
    throw;
  }
}

NvmlObserver::~NvmlObserver() {
  api_.shutdown();
}

double NvmlObserver::read_j() {
  unsigned long long mj = 0;
  check(api_, api_.total_energy_mj(device_, &mj), "nvmlDeviceGetTotalEnergyConsumption");
  return static_cast<double>(mj - start_mj_) * 1e-3;
}

double NvmlObserver::power_now_w() const {
  unsigned mw = 0;
  check(api_, api_.power_mw(device_, &mw), "nvmlDeviceGetPowerUsage");
  return mw * 1e-3;
}

}  // namespace wstune
