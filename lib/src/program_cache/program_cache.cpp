// The persistent program binary cache (program_cache.hpp).
#include "program_cache/program_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace wstune {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "wstune-program 1\n";

// "<tag> <size>\n<bytes>" at `at` of `text`; advances `at`. False when torn.
bool read_field(const std::string& text, std::size_t& at, std::string_view tag, std::string& out) {
  if (text.compare(at, tag.size() + 1, std::string(tag) + ' ') != 0) return false;
  at += tag.size() + 1;
  const std::size_t nl = text.find('\n', at);
  if (nl == std::string::npos || nl == at || nl - at > 19) return false;
  std::size_t n = 0;
  for (std::size_t i = at; i < nl; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    n = n * 10 + static_cast<std::size_t>(text[i] - '0');
  }
  at = nl + 1;
  if (text.size() - at < n) return false;
  out = text.substr(at, n);
  at += n;
  return true;
}

std::string field(std::string_view tag, std::string_view bytes) {
  return fmt::format("{} {}\n", tag, bytes.size()) + std::string(bytes);
}

std::string device_text(const cl::Device& d, cl_device_info what) {
  std::string s;
  if (d.getInfo(what, &s) != CL_SUCCESS) return "?";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string platform_text(const cl::Device& d, cl_platform_info what) {
  cl_platform_id platform = nullptr;
  if (clGetDeviceInfo(d(), CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) != CL_SUCCESS) return "?";
  std::string s;
  if (cl::Platform(platform, true).getInfo(what, &s) != CL_SUCCESS) return "?";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

// This process's counts (build_program()).
std::mutex counts_mutex;
ProgramBuildCounts counts;

void count(ProgramOrigin origin, double ms) {
  const std::lock_guard lock(counts_mutex);
  switch (origin) {
    case ProgramOrigin::source:
      ++counts.source;
      counts.source_ms += ms;
      break;
    case ProgramOrigin::binary:
      ++counts.binary;
      counts.binary_ms += ms;
      break;
    case ProgramOrigin::cached_failure:
      ++counts.cached_failure;
      break;
  }
}

// Appends one line to WSTUNE_BUILD_LOG (when set); O_APPEND keeps the
// lines of concurrent processes whole.
void log_build(std::string_view origin, const std::string& key, double ms, bool ok) {
  const char* path = std::getenv("WSTUNE_BUILD_LOG");
  if (!path || !*path) return;
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string line = build_log_line(origin, key, ms, ok);
  [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

// The binary of a program built for one device (CL_PROGRAM_BINARIES); empty when it has none.
std::string program_binary(const cl::Program& program) {
  std::size_t size = 0;
  if (clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return {};
  std::string bytes(size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(bytes.data());
  if (clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) != CL_SUCCESS) return {};
  return bytes;
}

// `binary` loaded and built, or nullopt when the driver refuses it.
std::optional<cl::Program> from_binary(const cl::Context& context, const cl::Device& device, const std::string& binary,
                                       const std::string& options) {
  const std::size_t size = binary.size();
  const auto* data = reinterpret_cast<const unsigned char*>(binary.data());
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_device_id id = device();
  cl_program p = clCreateProgramWithBinary(context(), 1, &id, &size, &data, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS || !p) {
    if (p) clReleaseProgram(p);
    return std::nullopt;
  }
  cl::Program program(p);  // takes the reference
  if (clBuildProgram(p, 1, &id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) return std::nullopt;
  return program;
}

std::string build_log(const cl::Program& program, const cl::Device& device) {
  std::string log;
  program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log);
  return log;
}

}  // namespace

ProgramCache::ProgramCache(fs::path dir) : dir_(std::move(dir)) {}

fs::path ProgramCache::default_dir() {
  if (const char* d = std::getenv("WSTUNE_CACHE_DIR"); d && *d) return std::string_view(d) == "off" ? fs::path() : d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "wstune" / "programs";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "wstune" / "programs";
  return {};
}

ProgramCache& ProgramCache::process() {
  static ProgramCache cache(default_dir());
  return cache;
}

void ProgramCache::configure(const fs::path& dir) {
  process().dir_ = dir;
  ::setenv("WSTUNE_CACHE_DIR", dir.empty() ? "off" : dir.c_str(), 1);
}

std::string ProgramCache::key(const cl::Device& device, std::string_view options, std::string_view source) {
  cl_uint units = 0;
  check(device.getInfo(CL_DEVICE_MAX_COMPUTE_UNITS, &units), "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
  std::string k = "device " + device_text(device, CL_DEVICE_VENDOR) + " | " + device_text(device, CL_DEVICE_NAME);
  k += fmt::format(" | {} CUs | {}\n", units, device_text(device, CL_DEVICE_VERSION));
  k += "driver " + device_text(device, CL_DRIVER_VERSION) + "\n";
  k += "platform " + platform_text(device, CL_PLATFORM_NAME) + " | " + platform_text(device, CL_PLATFORM_VERSION);
  k += "\noptions " + std::string(options) + "\n";
  k += fmt::format("source {} bytes, FNV-1a {}\n", source.size(), fnv1a_hex(source));
  return k;
}

fs::path ProgramCache::path_of(const std::string& key) const {
  return dir_ / (fnv1a_hex(key) + ".bin");
}

std::optional<CachedProgram> ProgramCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(path_of(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = std::move(all).str();
  if (text.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  std::size_t at = kMagic.size();
  std::string stored_key;
  CachedProgram p;
  if (!read_field(text, at, "key", stored_key) || stored_key != key) return std::nullopt;
  if (read_field(text, at, "binary", p.binary)) {
    if (p.binary.empty() || at != text.size()) return std::nullopt;
    return p;
  }
  if (!read_field(text, at, "failed", p.log) || at != text.size()) return std::nullopt;
  p.failed = true;
  return p;
}

bool ProgramCache::store(const std::string& key, const CachedProgram& value) const {
  if (!enabled()) return false;
  static std::atomic<unsigned> serial{0};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const fs::path final_path = path_of(key);
  const fs::path tmp = final_path.string() + fmt::format(".tmp.{}.{}", ::getpid(), serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kMagic << field("key", key) << (value.failed ? field("failed", value.log) : field("binary", value.binary));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, final_path, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::string build_log_line(std::string_view origin, const std::string& key, double ms, bool ok) {
  return fmt::format("{} {} {:.3f} {} {}\n", origin, fnv1a_hex(key), ms, ok ? "ok" : "fail", ::getpid());
}

ProgramBuildCounts program_build_counts() {
  const std::lock_guard lock(counts_mutex);
  return counts;
}

ProgramBuild build_program(const cl::Context& context, const cl::Device& device, const std::string& source,
                           const std::string& options, const ProgramCache* cache, bool warm) {
  const ProgramCache& c = cache ? *cache : ProgramCache::process();
  const auto t0 = std::chrono::steady_clock::now();
  auto ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  ProgramBuild r;
  const std::string key = c.enabled() ? ProgramCache::key(device, options, source) : std::string();
  if (std::optional<CachedProgram> hit = c.load(key)) {
    if (hit->failed) {
      r.code = CL_BUILD_PROGRAM_FAILURE;
      r.log = std::move(hit->log);
      r.origin = ProgramOrigin::cached_failure;
    } else if (std::optional<cl::Program> p = from_binary(context, device, hit->binary, options)) {
      r.program = std::move(*p);
      r.origin = ProgramOrigin::binary;
    }
    if (r.origin != ProgramOrigin::source) {
      r.ms = ms();
      count(r.origin, r.ms);
      log_build(r.origin == ProgramOrigin::binary ? "binary" : "cached_failure", key, r.ms, r.code == CL_SUCCESS);
      return r;
    }
    const std::lock_guard lock(counts_mutex);
    ++counts.rejected;  // a binary the driver refuses: rebuilt from source and overwritten
  }
  cl_int err = CL_SUCCESS;
  r.program = cl::Program(context, source, false, &err);
  check(err, "clCreateProgramWithSource");
  r.code = r.program.build(std::vector<cl::Device>{device}, options.c_str());
  if (r.code != CL_SUCCESS) r.log = build_log(r.program, device);
  r.ms = ms();
  count(ProgramOrigin::source, r.ms);
  log_build("source", key, r.ms, r.code == CL_SUCCESS);
  if (!c.enabled()) return r;
  if (r.code == CL_SUCCESS) {
    const std::string binary = program_binary(r.program);
    if (!binary.empty() && c.store(key, CachedProgram{binary, false, {}}) && warm) {
      const auto tw = std::chrono::steady_clock::now();
      const bool warmed = from_binary(context, device, binary, options).has_value();
      log_build("warm", key, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tw).count(),
                warmed);
    }
  } else if (r.code == CL_BUILD_PROGRAM_FAILURE) {  // a compile error: deterministic for this key
    c.store(key, CachedProgram{{}, true, r.log});
  }
  return r;
}

}  // namespace wstune
