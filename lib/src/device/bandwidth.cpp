#include "device/bandwidth.hpp"

#include <cstring>

#include <fmt/format.h>

#include "device/pinned_memory.hpp"
#include "format/json.hpp"
#include "kernel/host_buffer.hpp"
#include "wstune/error.hpp"

namespace wstune {

namespace {

// Times options.warmup + options.repetitions blocking transfers between
// `host` and `dev` (an upload when `upload`).
void time_transfers(cl::CommandQueue& queue, const cl::Buffer& dev, std::byte* host, std::size_t bytes, bool upload,
                    const BandwidthOptions& options, TransferSamples& out) {
  for (unsigned i = 0; i < options.warmup + options.repetitions; ++i) {
    cl::Event ev;
    const auto t0 = std::chrono::steady_clock::now();
    if (upload) {
      WSTUNE_CL_CHECK(queue.enqueueWriteBuffer(dev, CL_TRUE, 0, bytes, host, nullptr, &ev));
    } else {
      WSTUNE_CL_CHECK(queue.enqueueReadBuffer(dev, CL_TRUE, 0, bytes, host, nullptr, &ev));
    }
    const double wall = ms_since(t0);
    if (i < options.warmup) continue;
    out.event.ms.push_back(event_span_ms(ev, ev));
    out.wall.ms.push_back(wall);
  }
}

}  // namespace

double TransferSamples::gbps(std::size_t bytes) const noexcept {
  return wstune::gbps(bytes, event);
}
double TransferSamples::wall_gbps(std::size_t bytes) const noexcept {
  return wstune::gbps(bytes, wall);
}

DeviceBandwidth measure_bandwidth(const Device& device, const BandwidthOptions& options) {
  if (options.bytes == 0 || options.repetitions == 0) {
    throw UsageError(fmt::format("bandwidth: give a positive size and repetitions (got {} bytes, {} repetitions)",
                                 options.bytes, options.repetitions));
  }
  DeviceBandwidth b;
  b.device_id = device.info.id();
  b.device_name = device.info.name;
  b.bytes = options.bytes;
  try {
    cl_int err = CL_SUCCESS;
    cl::Context context(device.device, nullptr, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    cl::CommandQueue queue(context, device.device, CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, "clCreateCommandQueue(CL_QUEUE_PROFILING_ENABLE)");
    cl::Buffer dev(context, CL_MEM_READ_WRITE, options.bytes, nullptr, &err);
    check(err, "clCreateBuffer(device)");
    {
      HostBuffer pageable(ElementType{ScalarType::u8, 1}, options.bytes);  // zeroed: every page touched
      time_transfers(queue, dev, pageable.data(), options.bytes, true, options, b.pageable_h2d);
      time_transfers(queue, dev, pageable.data(), options.bytes, false, options, b.pageable_d2h);
    }
    PinnedMemory memory(context, device.device);
    HostBuffer pinned(ElementType{ScalarType::u8, 1}, options.bytes, &memory);
    b.pinned_fallback = memory.fallbacks() > 0;
    time_transfers(queue, dev, pinned.data(), options.bytes, true, options, b.pinned_h2d);
    time_transfers(queue, dev, pinned.data(), options.bytes, false, options, b.pinned_d2h);
  } catch (const std::exception& e) {
    b.error = e.what();
  }
  return b;
}

nlohmann::json to_json(const DeviceBandwidth& b) {
  auto kind = [&](const TransferSamples& t) {
    return nlohmann::json{{"gbps", t.gbps(b.bytes)},
                          {"wall_gbps", t.wall_gbps(b.bytes)},
                          {"event_ms", to_json(t.event)},
                          {"wall_ms", to_json(t.wall)}};
  };
  return {{"device_id", b.device_id},
          {"device_name", b.device_name},
          {"bytes", b.bytes},
          {"error", b.error},
          {"pinned_fallback", b.pinned_fallback},
          {"pageable_h2d", kind(b.pageable_h2d)},
          {"pageable_d2h", kind(b.pageable_d2h)},
          {"pinned_h2d", kind(b.pinned_h2d)},
          {"pinned_d2h", kind(b.pinned_d2h)}};
}

}  // namespace wstune
