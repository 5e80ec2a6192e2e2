#pragma once
// PoCL device set-up shared by the multi-device tests.
#include <cstdlib>
#include <string>
#include <vector>

#include "wstune/device.hpp"

namespace wstune::test {

/// Asks PoCL for `count` pthread CPU devices of one thread each (the thread
/// count only where unset; POCL_DEVICES replaced only with `overwrite`).
/// Call before the ICD loader first asks for platforms, e.g. from a
/// namespace-scope initialiser. Returns true.
inline bool use_pocl_pthread_devices(unsigned count, bool overwrite) {
  std::string devices;
  for (unsigned i = 0; i < count; ++i) devices += i ? " pthread" : "pthread";
  setenv("POCL_DEVICES", devices.c_str(), overwrite ? 1 : 0);
  setenv("POCL_MAX_PTHREAD_COUNT", "1", 0);
  return true;
}

/// The first `n` (or fewer) PoCL devices, in enumerate_devices() order.
inline std::vector<Device> pocl_devices(std::size_t n) {
  std::vector<Device> out;
  for (auto& d : enumerate_devices())
    if (d.info.platform.find("Portable") != std::string::npos && out.size() < n) out.push_back(d);
  return out;
}

}  // namespace wstune::test
