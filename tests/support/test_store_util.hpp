#pragma once
// Shared helpers of the store tests: fake device models and temp dirs.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "wstune/device.hpp"
#include "wstune/store.hpp"

namespace wstune::test {

inline DeviceInfo fake_device(std::string name, std::string arch = "sm_90", std::string vendor = "NVIDIA Corporation",
                              std::string type = "gpu", unsigned cu = 132) {
  DeviceInfo d;
  d.platform = "Fake";
  d.name = std::move(name);
  d.vendor = std::move(vendor);
  d.type = std::move(type);
  d.driver_version = "1.0";
  d.opencl_version = "OpenCL 3.0";
  d.architecture = std::move(arch);
  d.compute_units = cu;
  d.pe_per_cu = 128;
  d.pe_source = PeSource::table;
  d.pe_detail = "test";
  d.max_clock_mhz = 1980;
  d.max_work_group_size = 1024;
  d.max_work_item_sizes = {1024, 1024, 64};
  d.local_mem_bytes = 49152;
  d.global_mem_bytes = 80ull << 30;
  d.preferred_wg_multiple = 32;
  d.native_float_width = 1;
  d.extensions = {"cl_khr_fp64", "cl_nv_device_attribute_query"};
  return d;
}

/// A fresh directory under /tmp, removed at destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "wstune-store-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
  /// Writes `text` (bytes as they are) to the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

inline TrialRecord trial(std::size_t x, double ms, TrialStatus st = TrialStatus::correct) {
  TrialRecord t;
  t.local = Extent{x, 1, 1};
  t.status = st;
  t.samples_ms = {ms * 1.02, ms, ms * 0.99};
  t.compile_ms = 1.5;
  t.run_ms = 3 * ms;
  return t;
}

}  // namespace wstune::test
