#pragma once
/// @file bandwidth.hpp
/// Host↔device transfer bandwidth of one OpenCL device, from pageable host
/// memory (an ordinary heap allocation, which the driver stages through its
/// own pinned buffer) and from pinned memory (PinnedMemory, pinned_memory.hpp:
/// a mapped CL_MEM_ALLOC_HOST_PTR buffer the DMA engine reads and writes
/// directly). Each transfer is one blocking clEnqueueWriteBuffer (upload,
/// host→device) or clEnqueueReadBuffer (download, device→host) of the whole
/// buffer (OpenCL 1.2 §5.2.2), timed by its profiling event
/// (CL_PROFILING_COMMAND_END − CL_PROFILING_COMMAND_START, §5.12) and by the
/// host's wall clock around the call (staging included).
/// Units: bytes, milliseconds, GB/s = 10^9 bytes per second.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wstune/device.hpp"
#include "wstune/timing.hpp"

namespace wstune {

/// One kind of transfer, repeated: every sample kept.
struct TransferSamples {
  Samples event;  ///< profiling-event time per transfer (ms)
  Samples wall;   ///< wall clock of the blocking call per transfer (ms)
  /// bytes / median event time, GB/s (0 without samples).
  [[nodiscard]] double gbps(std::size_t bytes) const noexcept;
  /// bytes / median wall time, GB/s (0 without samples).
  [[nodiscard]] double wall_gbps(std::size_t bytes) const noexcept;
};

/// What measure_bandwidth() asks for.
struct BandwidthOptions {
  std::size_t bytes = std::size_t{256} << 20;  ///< bytes per transfer (256 MiB)
  unsigned warmup = 2;                         ///< untimed transfers of each kind first
  unsigned repetitions = 9;                    ///< timed transfers of each kind (the median is reported)
};

/// One device's measured bandwidths. A failure (no memory for the buffer,
/// an OpenCL error) is data: `error` says why and the samples taken so far
/// are kept.
struct DeviceBandwidth {
  std::string device_id;         ///< "P:D"
  std::string device_name;       ///< CL_DEVICE_NAME
  std::size_t bytes = 0;         ///< bytes per transfer
  TransferSamples pageable_h2d;  ///< upload from pageable host memory
  TransferSamples pageable_d2h;  ///< download to pageable host memory
  TransferSamples pinned_h2d;    ///< upload from pinned host memory
  TransferSamples pinned_d2h;    ///< download to pinned host memory
  bool pinned_fallback = false;  ///< the driver refused pinned memory: "pinned" is the heap
  std::string error;             ///< why the measurement failed ("" when it did not)
  /// True when every kind was measured.
  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

/// Measures `device`'s pageable and pinned upload and download bandwidth in
/// a context of its own: options.warmup untimed, then options.repetitions
/// timed transfers of options.bytes per kind. Throws UsageError for 0 bytes
/// or 0 repetitions; device failures go into DeviceBandwidth::error.
DeviceBandwidth measure_bandwidth(const Device& device, const BandwidthOptions& options = {});

/// {"device_id", "device_name", "bytes", "error", "pinned_fallback", and per
/// kind ("pageable_h2d", …) {"gbps", "wall_gbps", "event_ms", "wall_ms"}}.
nlohmann::json to_json(const DeviceBandwidth& b);

}  // namespace wstune
