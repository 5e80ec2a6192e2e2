#pragma once
/// @file pci.hpp
/// An OpenCL device's PCI bus id (internal), to find the same device in a
/// vendor's management library (NVML). NVIDIA's cl_nv_device_attribute_query
/// gives CL_DEVICE_PCI_BUS_ID_NV (0x4008), CL_DEVICE_PCI_SLOT_ID_NV
/// (0x4009: device << 3 | function) and, in newer drivers,
/// CL_DEVICE_PCI_DOMAIN_ID_NV (0x400A); cl_khr_pci_bus_info gives
/// CL_DEVICE_PCI_BUS_INFO_KHR (0x410F: domain, bus, device, function).

#include <cstdint>
#include <optional>
#include <string>

#include <CL/opencl.hpp>

namespace wstune {

/// "DDDDDDDD:BB:DD.F" (hex, NVML's form) of domain, bus, device, function.
std::string pci_bus_id_text(std::uint32_t domain, std::uint32_t bus, std::uint32_t device, std::uint32_t function);

/// The bus id of `device` from the extensions above, or nullopt when it has none.
std::optional<std::string> pci_bus_id(const cl::Device& device);

}  // namespace wstune
