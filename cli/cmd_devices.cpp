// wstune devices: every OpenCL device with its CU/PE model.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "table.hpp"
#include "wstune/device.hpp"
#include "wstune/json.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{}", bytes >> 20); }

int devices_main(int argc, char** argv) {
  po::options_description desc("wstune devices options");
  desc.add_options()("json", "print JSON instead of a table");
  po::variables_map vm;
  if (!parse_options(argc, argv, "usage: wstune devices [--json]\n\nLists every OpenCL device: "
                     "compute units (CU), processing elements (PE) per CU and where that count came from.",
                     desc, vm)) return 0;
  const auto all = enumerate_devices();
  if (vm.count("json")) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& d : all) j.push_back(to_json(d.info));
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (all.empty()) {
    std::cout << "no OpenCL device found (install an ICD such as pocl-opencl-icd, or check OCL_ICD_VENDORS)\n";
    return 0;
  }
  Table t({"id", "name", "type", "CU", "PE/CU", "PEs", "PE source", "MHz", "max WG", "max WI sizes",
           "local KiB", "global MiB", "pref. mult", "OpenCL", "driver", "fingerprint"});
  for (const auto& d : all) {
    const auto& i = d.info;
    t.add({i.id(), i.name, i.type, fmt::format("{}", i.compute_units), fmt::format("{}", i.pe_per_cu),
           fmt::format("{}", i.total_pe()), std::string(to_string(i.pe_source)), fmt::format("{}", i.max_clock_mhz),
           fmt::format("{}", i.max_work_group_size), fmt::format("{}", fmt::join(i.max_work_item_sizes, "x")),
           fmt::format("{}", i.local_mem_bytes >> 10), mib(i.global_mem_bytes), fmt::format("{}", i.preferred_wg_multiple),
           i.opencl_version, i.driver_version, i.fingerprint()});
  }
  t.print(std::cout);
  std::cout << "\nPE counts:\n";
  for (const auto& d : all) std::cout << fmt::format("  {} {}: {}\n", d.info.id(), d.info.platform, d.info.pe_detail);
  return 0;
}

WSTUNE_COMMAND("devices", "list OpenCL devices with compute units and processing elements", devices_main);

}  // namespace
}  // namespace wstune::cli
