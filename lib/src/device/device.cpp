#include "wstune/device.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "wstune/error.hpp"

namespace wstune {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

// The major version of a CL_DEVICE_VERSION text, "OpenCL 3.0 PoCL …" → 3 (0 if unreadable).
unsigned opencl_major(std::string_view version) {
  constexpr std::string_view prefix = "OpenCL ";
  if (version.substr(0, prefix.size()) != prefix) return 0;
  version.remove_prefix(prefix.size());
  unsigned major = 0;
  std::from_chars(version.data(), version.data() + version.size(), major);
  return major;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

unsigned parse_pe(std::string_view value, std::string_view key, std::string_view origin) {
  unsigned v = 0;
  std::string t = trim(value);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v == 0) {
    throw UsageError(
        fmt::format("{}: PEs per CU for '{}' is '{}', not a positive integer; "
                    "write e.g. '{} = 128'",
                    origin, key, value, key));
  }
  return v;
}

template <typename T>
std::optional<T> try_info(const cl::Device& d, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(d(), param, sizeof(T), &value, nullptr) != CL_SUCCESS) return std::nullopt;
  return value;
}

std::string str_info(const cl::Device& d, cl_device_info param) {
  std::string s;
  WSTUNE_CL_CHECK(d.getInfo(param, &s));
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  return s;
}

std::string type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (t & CL_DEVICE_TYPE_CUSTOM) return "custom";
  return "other";
}

std::size_t preferred_multiple(const cl::Context& ctx, const cl::Device& dev) {
  static const char* src = "__kernel void wstune_probe(__global float* a) { a[get_global_id(0)] += 1.0f; }";
  cl_int err = CL_SUCCESS;
  cl::Program prog(ctx, std::string(src), false, &err);
  if (err != CL_SUCCESS) return 0;
  if (prog.build(std::vector<cl::Device>{dev}) != CL_SUCCESS) return 0;
  cl::Kernel k(prog, "wstune_probe", &err);
  if (err != CL_SUCCESS) return 0;
  std::size_t m = 0;
  if (k.getWorkGroupInfo(dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, &m) != CL_SUCCESS) return 0;
  return m;
}

}  // namespace

std::string_view to_string(PeSource s) noexcept {
  switch (s) {
    case PeSource::extension:
      return "extension";
    case PeSource::table:
      return "table";
    case PeSource::estimate:
      return "estimate";
    case PeSource::override_:
      return "override";
  }
  return "estimate";
}

std::string DeviceInfo::non_uniform_std() const {
  if (!non_uniform_work_groups) return {};
  return opencl_major(opencl_version) >= 3 ? "-cl-std=CL3.0" : "-cl-std=CL2.0";
}

std::string DeviceInfo::id() const {
  return fmt::format("{}:{}", platform_index, device_index);
}

std::string DeviceInfo::fingerprint() const {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0x1f;
    h *= 1099511628211ull;  // field separator
  };
  mix(vendor);
  mix(name);
  mix(driver_version);
  mix(std::to_string(compute_units));
  return fmt::format("{:016x}", h);
}

std::optional<unsigned> nvidia_fp32_cores_per_sm(unsigned major, unsigned minor) noexcept {
  switch (major) {
    case 1:
      return 8;  // Tesla
    case 2:
      return minor == 0 ? 32u : 48u;  // Fermi GF100 / GF10x
    case 3:
      return 192;  // Kepler
    case 5:
      return 128;  // Maxwell
    case 6:
      return minor == 0 ? 64u : 128u;  // Pascal GP100 / GP10x
    case 7:
      return 64;  // Volta, Turing
    case 8:
      return minor == 0 ? 64u : 128u;  // Ampere GA100 / GA10x, Ada 8.9
    case 9:
      return 128;  // Hopper
    case 10:
    case 11:
    case 12:
      return 128;  // Blackwell
    default:
      return std::nullopt;
  }
}

unsigned amd_pe_per_cu(unsigned simd_per_cu, unsigned simd_width, unsigned instruction_width) noexcept {
  return simd_per_cu * simd_width * std::max(1u, instruction_width);
}

// ---- overrides ---------------------------------------------------------------

void PeOverrides::set(std::string key, unsigned pe) {
  entries_[lower(trim(key))] = pe;
}

void PeOverrides::merge(const PeOverrides& other) {
  for (const auto& [k, v] : other.entries_) entries_[k] = v;
}

std::optional<unsigned> PeOverrides::lookup(std::string_view device_name) const {
  const std::string n = lower(device_name);
  std::optional<unsigned> best;
  std::size_t best_len = 0;
  for (const auto& [k, v] : entries_) {
    if (!k.empty() && n.find(k) != std::string::npos && k.size() >= best_len) {
      best = v;
      best_len = k.size();
    }
  }
  return best;
}

PeOverrides PeOverrides::parse_file_text(std::string_view text, std::string_view origin) {
  namespace po = boost::program_options;
  PeOverrides o;
  std::istringstream in{std::string(text)};
  po::options_description none;
  po::parsed_options parsed = [&] {
    try {
      return po::parse_config_file(in, none, /*allow_unregistered=*/true);
    } catch (const po::error& e) {
      throw UsageError(fmt::format("{}: {}; the format is '[pe_per_cu]' then 'name = N' lines", origin, e.what()));
    }
  }();
  for (const auto& opt : parsed.options) {
    const std::string prefix = "pe_per_cu.";
    if (opt.string_key.rfind(prefix, 0) != 0) {
      throw UsageError(
          fmt::format("{}: unknown entry '{}'; put overrides under a '[pe_per_cu]' "
                      "section as 'name = N'",
                      origin, opt.string_key));
    }
    const std::string key = opt.string_key.substr(prefix.size());
    o.set(key, parse_pe(opt.value.empty() ? "" : opt.value.back(), key, origin));
  }
  return o;
}

PeOverrides PeOverrides::parse_env_text(std::string_view text, std::string_view origin) {
  PeOverrides o;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string item = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || trim(item.substr(0, eq)).empty()) {
      throw UsageError(
          fmt::format("{}: entry '{}' is not 'name=N'; write e.g. "
                      "WSTUNE_PE_PER_CU=\"H100=128;pthread=8\"",
                      origin, item));
    }
    o.set(item.substr(0, eq), parse_pe(item.substr(eq + 1), trim(item.substr(0, eq)), origin));
  }
  return o;
}

PeOverrides PeOverrides::from_environment() {
  PeOverrides o;
  std::filesystem::path file;
  if (const char* f = std::getenv("WSTUNE_PE_FILE"); f && *f) {
    file = f;
    if (!std::filesystem::exists(file)) {
      throw UsageError(
          fmt::format("WSTUNE_PE_FILE names '{}', which does not exist; create it or unset the variable", f));
    }
  } else if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) {
    file = std::filesystem::path(x) / "wstune" / "pe.conf";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    file = std::filesystem::path(h) / ".config" / "wstune" / "pe.conf";
  }
  if (!file.empty() && std::filesystem::exists(file)) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    o.merge(parse_file_text(ss.str(), file.string()));
  }
  if (const char* e = std::getenv("WSTUNE_PE_PER_CU"); e && *e) {
    o.merge(parse_env_text(e, "WSTUNE_PE_PER_CU"));
  }
  return o;
}

// ---- query ---------------------------------------------------------------------

DeviceInfo query_device_info(const cl::Platform& platform, const cl::Device& dev, unsigned pi, unsigned di,
                             const PeOverrides& overrides) {
  DeviceInfo info;
  info.platform_index = pi;
  info.device_index = di;
  WSTUNE_CL_CHECK(platform.getInfo(CL_PLATFORM_NAME, &info.platform));
  while (!info.platform.empty() && info.platform.back() == '\0') info.platform.pop_back();
  info.name = str_info(dev, CL_DEVICE_NAME);
  info.vendor = str_info(dev, CL_DEVICE_VENDOR);
  info.driver_version = str_info(dev, CL_DRIVER_VERSION);
  info.opencl_version = str_info(dev, CL_DEVICE_VERSION);
  cl_device_type type = 0;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_TYPE, &type));
  info.type = type_name(type);
  cl_uint u = 0;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_MAX_COMPUTE_UNITS, &u));
  info.compute_units = u;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_MAX_CLOCK_FREQUENCY, &u));
  info.max_clock_mhz = u;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE, &info.max_work_group_size));
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES, &info.max_work_item_sizes));
  cl_ulong ul = 0;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_LOCAL_MEM_SIZE, &ul));
  info.local_mem_bytes = ul;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_GLOBAL_MEM_SIZE, &ul));
  info.global_mem_bytes = ul;
  WSTUNE_CL_CHECK(dev.getInfo(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, &u));
  info.native_float_width = u;
  {
    std::istringstream ext(str_info(dev, CL_DEVICE_EXTENSIONS));
    for (std::string e; ext >> e;) info.extensions.push_back(e);
  }
  auto has_ext = [&](std::string_view e) {
    return std::find(info.extensions.begin(), info.extensions.end(), e) != info.extensions.end();
  };
  {
    cl_int err = CL_SUCCESS;
    cl::Context ctx(dev, nullptr, nullptr, nullptr, &err);
    if (err == CL_SUCCESS) info.preferred_wg_multiple = preferred_multiple(ctx, dev);
  }
  // Non-uniform work-groups: every OpenCL 2.x device, a 3.0 device that says
  // so (CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT = 0x1065, not in the 1.2
  // headers this library targets).
  if (const unsigned major = opencl_major(info.opencl_version); major == 2) {
    info.non_uniform_work_groups = true;
  } else if (major >= 3) {
    info.non_uniform_work_groups = try_info<cl_bool>(dev, 0x1065).value_or(CL_FALSE) == CL_TRUE;
  }

  // Architecture (for the store's look-up chain) and PEs per CU.
  std::optional<unsigned> pe;
  if (has_ext("cl_nv_device_attribute_query")) {
    auto ma = try_info<cl_uint>(dev, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
    auto mi = try_info<cl_uint>(dev, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
    if (ma && mi) {
      info.architecture = fmt::format("sm_{}{}", *ma, *mi);
      pe = nvidia_fp32_cores_per_sm(*ma, *mi);
      if (pe) {
        info.pe_source = PeSource::extension;
        info.pe_detail = fmt::format(
            "cl_nv_device_attribute_query: compute capability {}.{} "
            "-> {} FP32 cores/SM (CUDA Programming Guide table)",
            *ma, *mi, *pe);
      }
    }
  }
  if (!pe && has_ext("cl_amd_device_attribute_query")) {
    auto simd = try_info<cl_uint>(dev, CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD);
    auto width = try_info<cl_uint>(dev, CL_DEVICE_SIMD_WIDTH_AMD);
    auto instr = try_info<cl_uint>(dev, CL_DEVICE_SIMD_INSTRUCTION_WIDTH_AMD);
    auto gma = try_info<cl_uint>(dev, CL_DEVICE_GFXIP_MAJOR_AMD);
    auto gmi = try_info<cl_uint>(dev, CL_DEVICE_GFXIP_MINOR_AMD);
    if (gma && gmi) info.architecture = fmt::format("gfx{}{}", *gma, *gmi);
    if (simd && width && *simd && *width) {
      pe = amd_pe_per_cu(*simd, *width, instr.value_or(1));
      info.pe_source = PeSource::extension;
      info.pe_detail =
          fmt::format("cl_amd_device_attribute_query: {} SIMD/CU x {} wide x {}", *simd, *width, instr.value_or(1));
    }
  }
  if (!pe && has_ext("cl_intel_device_attribute_query")) {
    auto ip = try_info<cl_uint>(dev, CL_DEVICE_IP_VERSION_INTEL);
    if (ip) info.architecture = fmt::format("intel-ip-{:08x}", *ip);
    // With the extension the CU count is the EU count; each EU has 8 FP32 lanes
    // (Intel Graphics Gen9..Xe "EU" docs).
    pe = 8;
    info.pe_source = PeSource::extension;
    info.pe_detail = "cl_intel_device_attribute_query: CUs are EUs, 8 FP32 lanes each";
  }
  if (!pe && (type & CL_DEVICE_TYPE_CPU)) {
    pe = std::max(1u, info.native_float_width);
    info.pe_source = PeSource::estimate;
    info.pe_detail =
        fmt::format("CPU estimate: native float vector width {} (SIMD lanes per core)", info.native_float_width);
  }
  if (!pe) {
    pe = static_cast<unsigned>(std::max<std::size_t>(1, info.preferred_wg_multiple));
    info.pe_source = PeSource::estimate;
    info.pe_detail = fmt::format("estimate: preferred work-group size multiple {}", *pe);
  }
  if (auto o = overrides.lookup(info.name)) {
    info.pe_detail = fmt::format("user override (was {} from {})", *pe, to_string(info.pe_source));
    pe = *o;
    info.pe_source = PeSource::override_;
  }
  info.pe_per_cu = *pe;
  return info;
}

std::vector<Device> enumerate_devices(const PeOverrides& overrides) {
  std::vector<Device> out;
  std::vector<cl::Platform> platforms;
  if (cl::Platform::get(&platforms) != CL_SUCCESS) return out;
  for (unsigned pi = 0; pi < platforms.size(); ++pi) {
    std::vector<cl::Device> devices;
    if (platforms[pi].getDevices(CL_DEVICE_TYPE_ALL, &devices) != CL_SUCCESS) continue;
    for (unsigned di = 0; di < devices.size(); ++di) {
      out.push_back(
          Device{platforms[pi], devices[di], query_device_info(platforms[pi], devices[di], pi, di, overrides)});
    }
  }
  return out;
}

namespace {
std::string device_list(const std::vector<Device>& all) {
  if (all.empty()) return "no OpenCL device is visible (is an ICD such as pocl-opencl-icd installed?)";
  std::string s = "devices:";
  for (const auto& d : all) s += fmt::format(" {} '{}' ({});", d.info.id(), d.info.name, d.info.type);
  s.pop_back();
  return s;
}
}  // namespace

std::vector<Device> select_devices(const std::vector<Device>& all, std::string_view selector) {
  std::vector<Device> out;
  const std::string sel = lower(trim(selector));
  if (sel.empty() || sel == "default") {
    for (const auto& d : all)
      if (d.info.type == "gpu") return {d};
    if (!all.empty()) return {all.front()};
  } else if (sel == "all") {
    out = all;
  } else if (sel == "cpu" || sel == "gpu" || sel == "accelerator") {
    for (const auto& d : all)
      if (d.info.type == sel) out.push_back(d);
  } else if (auto colon = sel.find(':'); colon != std::string::npos && std::all_of(sel.begin(), sel.end(), [](char c) {
                                           return std::isdigit(static_cast<unsigned char>(c)) || c == ':';
                                         })) {
    unsigned p = 0, d = 0;
    std::from_chars(sel.data(), sel.data() + colon, p);
    std::from_chars(sel.data() + colon + 1, sel.data() + sel.size(), d);
    for (const auto& dev : all)
      if (dev.info.platform_index == p && dev.info.device_index == d) out.push_back(dev);
  } else {
    for (const auto& d : all)
      if (lower(d.info.name).find(sel) != std::string::npos || lower(d.info.platform).find(sel) != std::string::npos)
        out.push_back(d);
  }
  if (out.empty()) {
    throw UsageError(
        fmt::format("device '{}' matches no OpenCL device; use P:D, cpu, gpu, all or a "
                    "name substring ({})",
                    selector, device_list(all)));
  }
  return out;
}

Device select_device(const std::vector<Device>& all, std::string_view selector) {
  auto v = select_devices(all, selector);
  if (lower(trim(selector)) == "all" && v.size() > 1) {
    throw UsageError(
        fmt::format("device 'all' names {} devices where one is needed; use P:D ({})", v.size(), device_list(all)));
  }
  return v.front();
}

}  // namespace wstune
