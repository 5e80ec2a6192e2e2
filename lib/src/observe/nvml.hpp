#pragma once
/// @file nvml.hpp
/// An NVIDIA GPU's energy through NVML (internal), loaded at run time with
/// dlopen("libnvidia-ml.so.1"): no build dependency, and a machine without
/// the driver simply has no observer. The counter is
/// nvmlDeviceGetTotalEnergyConsumption (mJ since the driver loaded; Volta
/// and later); nvmlDeviceGetPowerUsage (mW) is the device's power now. The
/// OpenCL device is matched to its NVML device by PCI bus id (pci.hpp).
/// Only queries: nothing sets clocks or power limits. Source: NVML API
/// Reference Manual, "Device Queries".

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "observe/observer.hpp"

namespace wstune {

/// The NVML functions the observer calls (each returns NVML's status, 0 =
/// NVML_SUCCESS), so tests give a fake table. A device is an opaque handle.
struct NvmlApi {
  std::function<int()> init;                                                   ///< nvmlInit_v2
  std::function<int()> shutdown;                                               ///< nvmlShutdown
  std::function<int(const char* bus_id, void** device)> device_by_pci_bus_id;  ///< nvmlDeviceGetHandleByPciBusId_v2
  std::function<int(unsigned* count)> device_count;                            ///< nvmlDeviceGetCount_v2
  std::function<int(unsigned index, void** device)> device_by_index;           ///< nvmlDeviceGetHandleByIndex_v2
  std::function<int(void* device, unsigned long long* mj)> total_energy_mj;    ///< nvmlDeviceGetTotalEnergyConsumption
  std::function<int(void* device, unsigned* mw)> power_mw;                     ///< nvmlDeviceGetPowerUsage
  std::function<const char*(int status)> error_string;                         ///< nvmlErrorString
  std::shared_ptr<void> library;  ///< keeps the dlopen'ed library loaded (null for a fake)
};

/// NVML from the library the environment variable WSTUNE_NVML_LIBRARY
/// names, else libnvidia-ml.so.1 on the loader's path, else
/// /usr/local/nvidia/lib64/libnvidia-ml.so.1; nullopt (with `why` set) when
/// none loads or one of its functions is missing.
std::optional<NvmlApi> load_nvml(std::string* why);

/// One GPU's total-energy counter through `api`.
class NvmlObserver final : public EnergyObserver {
 public:
  /// Initialises NVML and finds the device of PCI bus id `bus_id`
  /// ("DDDD:BB:DD.F", hex); with no bus id, the only device when NVML
  /// sees exactly one. Throws Error naming the NVML call and its status when
  /// the device is not found or has no energy counter (before Volta).
  NvmlObserver(NvmlApi api, const std::optional<std::string>& bus_id);
  ~NvmlObserver() override;
  NvmlObserver(const NvmlObserver&) = delete;
  NvmlObserver& operator=(const NvmlObserver&) = delete;
  [[nodiscard]] std::string_view sensor() const override { return "nvml"; }
  double read_j() override;
  [[nodiscard]] double resolution_j() const override { return 1e-3; }
  /// nvmlDeviceGetPowerUsage (W): the board's power now (on Ampere and
  /// later a 1 s average). Throws Error when NVML fails.
  [[nodiscard]] double power_now_w() const;

 private:
  NvmlApi api_;
  void* device_ = nullptr;
  unsigned long long start_mj_ = 0;
};

}  // namespace wstune
