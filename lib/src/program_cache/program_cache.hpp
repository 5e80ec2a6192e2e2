#pragma once
/// @file program_cache.hpp
/// A persistent cache of built OpenCL programs, and the one function that
/// builds a program (build_program()): a configuration's program is built
/// from source at most once per device, driver and build options, and later
/// builds — in this process, a later campaign, or the timing process after a
/// builder process of the build pool (evaluate/build_pool.hpp) built it —
/// load its binary (clCreateProgramWithBinary, OpenCL 1.2 §5.6.1) instead.
///
/// The key of an entry is the device's identity (CL_DEVICE_NAME,
/// CL_DEVICE_VENDOR, CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_VERSION,
/// CL_DRIVER_VERSION, the platform's CL_PLATFORM_NAME and
/// CL_PLATFORM_VERSION: what DeviceInfo::fingerprint() hashes and the
/// versions a binary depends on), the full build options and
/// the complete source text built (the configuration's #define lines
/// included: KernelSpec::source_defines()), hashed. The value is the program
/// binary of clGetProgramInfo(CL_PROGRAM_BINARIES) (OpenCL 1.2 §5.6.7), or,
/// for a source that does not compile (CL_BUILD_PROGRAM_FAILURE), the
/// failure and its build log, so a configuration that does not compile is
/// not compiled again either. On NVIDIA the binary is PTX: building from it
/// still runs the driver's PTX JIT, which the driver caches itself
/// (CUDA_CACHE_PATH, CUDA_CACHE_MAXSIZE).
///
/// On disk: one file per entry, `<dir>/<16 hex digits>.bin`, written to a
/// temporary file in the same folder and renamed over the entry (rename(2)
/// is atomic), so concurrent writers (the build pool's processes) never
/// leave a torn entry. An entry that cannot be read, is truncated, holds
/// another key, or whose binary the driver refuses is a miss: the program is
/// built from source and the entry overwritten. The cache never throws and
/// never fails a build: a folder that cannot be written only loses the
/// entry.
///
/// Where: the environment variable WSTUNE_CACHE_DIR, else
/// $XDG_CACHE_HOME/wstune/programs, else ~/.cache/wstune/programs;
/// WSTUNE_CACHE_DIR=off (or `wstune tune --no-binary-cache`) turns it off.
/// The CLI's --cache-dir sets the variable, so forked and launched children
/// use the same folder. With WSTUNE_BUILD_LOG naming a file, every build
/// appends one line to it (see build_log_line()): a record across the
/// processes of a campaign of how each program was built.
/// docs/tuning.md "Builds ahead of the device".

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <CL/opencl.hpp>

namespace wstune {

/// What the cache holds for one key.
struct CachedProgram {
  /// The program binary (empty for a failed build).
  std::string binary;
  /// True: the source did not compile (CL_BUILD_PROGRAM_FAILURE); `log` is its build log.
  bool failed = false;
  std::string log;  ///< the build log of a failed build
};

/// A folder of program binaries (see the file comment). Thread-safe and
/// safe across processes sharing the folder.
class ProgramCache {
 public:
  /// A cache in `dir` (created on the first store); an empty path: off
  /// (every lookup misses, nothing is stored).
  explicit ProgramCache(std::filesystem::path dir = {});
  /// The folder, empty when off.
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
  /// True unless off.
  [[nodiscard]] bool enabled() const noexcept { return !dir_.empty(); }

  /// The folder the environment names (see the file comment): empty for
  /// WSTUNE_CACHE_DIR=off, or when neither XDG_CACHE_HOME nor HOME is set.
  static std::filesystem::path default_dir();
  /// The cache every build_program() call of this process uses: in
  /// default_dir() unless configure() said otherwise.
  static ProgramCache& process();
  /// Points process() at `dir` (empty: off) and sets WSTUNE_CACHE_DIR to it
  /// ("off" when empty), so child processes, forked or launched, agree.
  static void configure(const std::filesystem::path& dir);

  /// The key text of a program of `source` built with `options` for
  /// `device` (its identity queried from OpenCL: see the file comment).
  /// Throws ClError when the device cannot be queried.
  static std::string key(const cl::Device& device, std::string_view options, std::string_view source);

  /// The entry of `key`, or nullopt (a miss: none, unreadable, torn, or
  /// another key's file).
  [[nodiscard]] std::optional<CachedProgram> load(const std::string& key) const;
  /// Stores `value` as the entry of `key` (atomically; replacing any).
  /// False when the folder cannot be written (the entry is then lost).
  bool store(const std::string& key, const CachedProgram& value) const;
  /// The entry file of `key` (whether it exists or not).
  [[nodiscard]] std::filesystem::path path_of(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

/// How a program was built.
enum class ProgramOrigin {
  source,         ///< compiled from source (clCreateProgramWithSource), stored in the cache
  binary,         ///< loaded from a cached binary (clCreateProgramWithBinary)
  cached_failure  ///< a source the cache knows does not compile: not compiled again
};

/// One build_program() call's outcome.
struct ProgramBuild {
  cl::Program program;       ///< the program (null for a cached failure)
  cl_int code = CL_SUCCESS;  ///< clBuildProgram's status (CL_BUILD_PROGRAM_FAILURE for a cached failure)
  std::string log;           ///< the build log when code is not CL_SUCCESS
  double ms = 0;             ///< wall time of the whole build, loading and storing included (ms)
  ProgramOrigin origin = ProgramOrigin::source;
};

/// Counts of this process's build_program() calls.
struct ProgramBuildCounts {
  std::uint64_t source = 0;             ///< builds from source (successful or not)
  std::uint64_t binary = 0;             ///< builds from a cached binary
  std::uint64_t cached_failure = 0;     ///< failures answered by the cache
  std::uint64_t rejected = 0;           ///< cached entries the driver refused (then built from source)
  double source_ms = 0, binary_ms = 0;  ///< their wall times (ms)
};

/// Builds `source` with `options` for `device` in `context`, through
/// `cache` (by default ProgramCache::process()): a cached binary is loaded
/// and built (clBuildProgram on it, which on NVIDIA runs the PTX JIT); a
/// cached failure is answered without compiling; otherwise the source is
/// compiled and its binary (or failure) stored. With `warm` a program built
/// from source is also loaded back from its binary and built once (so a
/// driver that caches its own JIT, NVIDIA's, has the binary's build cached
/// for the process that loads it next; the build pool's builders do this).
/// A build failure is the result's code and log, never thrown; throws
/// ClError only when the program object cannot be created from source.
ProgramBuild build_program(const cl::Context& context, const cl::Device& device, const std::string& source,
                           const std::string& options, const ProgramCache* cache = nullptr, bool warm = false);

/// This process's build counts so far (thread-safe).
ProgramBuildCounts program_build_counts();

/// The WSTUNE_BUILD_LOG line of one build: "<origin> <16 hex digits of the
/// key> <ms> <ok|fail> <pid>" (origin: source, binary, cached_failure,
/// warm), ending in a newline.
std::string build_log_line(std::string_view origin, const std::string& key, double ms, bool ok);

}  // namespace wstune
