// An OpenCL device's PCI bus id (pci.hpp).
#include "observe/pci.hpp"

#include <fmt/format.h>

namespace wstune {

namespace {

constexpr cl_device_info kBusIdNv = 0x4008;
constexpr cl_device_info kSlotIdNv = 0x4009;
constexpr cl_device_info kDomainIdNv = 0x400A;
constexpr cl_device_info kBusInfoKhr = 0x410F;

struct PciBusInfoKhr {
  cl_uint domain, bus, device, function;
};

template <typename T>
std::optional<T> info(const cl::Device& d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d(), what, sizeof v, &v, nullptr) != CL_SUCCESS) return std::nullopt;
  return v;
}

}  // namespace

std::string pci_bus_id_text(std::uint32_t domain, std::uint32_t bus, std::uint32_t device, std::uint32_t function) {
  return fmt::format("{:08x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

std::optional<std::string> pci_bus_id(const cl::Device& device) {
  cl_int err = CL_SUCCESS;
  const std::string extensions = device.getInfo<CL_DEVICE_EXTENSIONS>(&err);
  if (extensions.find("cl_khr_pci_bus_info") != std::string::npos)
    if (const auto k = info<PciBusInfoKhr>(device, kBusInfoKhr))
      return pci_bus_id_text(k->domain, k->bus, k->device, k->function);
  if (extensions.find("cl_nv_device_attribute_query") != std::string::npos) {
    const auto bus = info<cl_uint>(device, kBusIdNv);
    const auto slot = info<cl_uint>(device, kSlotIdNv);
    if (bus && slot)
      return pci_bus_id_text(info<cl_uint>(device, kDomainIdNv).value_or(0), *bus, *slot >> 3, *slot & 7);
  }
  return std::nullopt;
}

}  // namespace wstune
