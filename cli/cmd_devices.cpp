// wstune devices: every OpenCL device with its CU/PE model, and with
// --bandwidth each device's pageable and pinned transfer bandwidth.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "device/bandwidth.hpp"
#include "format/json.hpp"
#include "table.hpp"
#include "wstune/device.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

std::string mib(std::uint64_t bytes) {
  return fmt::format("{}", bytes >> 20);
}

// --bandwidth: each selected device's measured bandwidths, as a table or JSON.
int bandwidth_main(const std::vector<Device>& all, const po::variables_map& vm) {
  BandwidthOptions opt;
  opt.bytes = vm["bytes"].as<std::size_t>();
  opt.repetitions = vm["repetitions"].as<unsigned>();
  std::vector<Device> devices;
  for (const auto& sel : split_list(vm["device"].as<std::string>(), ','))  // a comma-separated list of selectors
    for (auto& d : select_devices(all, sel)) devices.push_back(std::move(d));
  std::vector<DeviceBandwidth> results;
  for (const auto& d : devices) results.push_back(measure_bandwidth(d, opt));
  if (vm.count("json")) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : results) j.push_back(to_json(b));
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "transfer bandwidth, GB/s (10^9 B/s), median of {} transfers of {} MiB; "
      "profiling events (wall clock in brackets)\n",
      opt.repetitions, opt.bytes >> 20);
  Table t({"id", "name", "pageable h2d", "pageable d2h", "pinned h2d", "pinned d2h", "error"});
  auto cell = [](const TransferSamples& s, std::size_t bytes) {
    return fmt::format("{:.2f} ({:.2f})", s.gbps(bytes), s.wall_gbps(bytes));
  };
  for (const auto& b : results) {
    t.add({b.device_id, b.device_name, cell(b.pageable_h2d, b.bytes), cell(b.pageable_d2h, b.bytes),
           cell(b.pinned_h2d, b.bytes), cell(b.pinned_d2h, b.bytes),
           b.pinned_fallback ? "pinned memory refused: heap used" : b.error});
  }
  t.print(std::cout);
  return 0;
}

int devices_main(int argc, char** argv) {
  po::options_description desc("wstune devices options");
  desc.add_options()("json", "print JSON instead of a table")(
      "bandwidth",
      "measure each device's upload (host to device) and download bandwidth from pageable and "
      "pinned host memory")("bytes", po::value<std::size_t>()->default_value(BandwidthOptions{}.bytes),
                            "bytes per transfer (--bandwidth)")(
      "repetitions", po::value<unsigned>()->default_value(BandwidthOptions{}.repetitions),
      "timed transfers per kind; the median is reported (--bandwidth)")(
      "device", po::value<std::string>()->default_value("all"),
      "devices to measure (--bandwidth): all, or selectors such as 1:0,1:1");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune devices [--json] [--bandwidth [--bytes N] [--repetitions R] "
                     "[--device SEL]]\n\nLists every OpenCL device: compute units (CU), processing elements (PE) "
                     "per CU and where that count came from; with --bandwidth, measures transfer bandwidth.",
                     desc, vm))
    return 0;
  const auto all = enumerate_devices();
  if (vm.count("bandwidth")) return bandwidth_main(all, vm);
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
  Table t({"id", "name", "type", "CU", "PE/CU", "PEs", "PE source", "MHz", "max WG", "max WI sizes", "local KiB",
           "global MiB", "pref. mult", "OpenCL", "driver", "fingerprint"});
  for (const auto& d : all) {
    const auto& i = d.info;
    t.add({i.id(), i.name, i.type, fmt::format("{}", i.compute_units), fmt::format("{}", i.pe_per_cu),
           fmt::format("{}", i.total_pe()), std::string(to_string(i.pe_source)), fmt::format("{}", i.max_clock_mhz),
           fmt::format("{}", i.max_work_group_size), fmt::format("{}", fmt::join(i.max_work_item_sizes, "x")),
           fmt::format("{}", i.local_mem_bytes >> 10), mib(i.global_mem_bytes),
           fmt::format("{}", i.preferred_wg_multiple), i.opencl_version, i.driver_version, i.fingerprint()});
  }
  t.print(std::cout);
  std::cout << "\nPE counts:\n";
  for (const auto& d : all) std::cout << fmt::format("  {} {}: {}\n", d.info.id(), d.info.platform, d.info.pe_detail);
  return 0;
}

WSTUNE_COMMAND("devices", "list OpenCL devices with compute units and processing elements", devices_main);

}  // namespace
}  // namespace wstune::cli
