// Helpers for tests of wstune::Tuner on real OpenCL (PoCL): a context and
// queue on the first device, programs built from source, buffers.
#pragma once
#include <string>
#include <vector>

#include <CL/opencl.hpp>

namespace wstune::test {

struct Cl {
  cl::Device dev;
  cl::Context ctx;
  cl::CommandQueue queue;

  Cl() {
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    for (auto& p : platforms) {
      std::vector<cl::Device> devs;
      p.getDevices(CL_DEVICE_TYPE_ALL, &devs);
      if (!devs.empty()) {
        dev = devs.front();
        break;
      }
    }
    ctx = cl::Context(dev);
    queue = cl::CommandQueue(ctx, dev);
  }
  /// Builds `source` with `options` and returns kernel `name`.
  cl::Kernel kernel(const std::string& source, const std::string& name, const std::string& options = "") {
    cl::Program prog(ctx, source);
    prog.build({dev}, options.c_str());
    return cl::Kernel(prog, name.c_str());
  }
  /// A read-write buffer holding `host`.
  cl::Buffer buffer(std::vector<float>& host) {
    return cl::Buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float), host.data());
  }
  /// The buffer's contents.
  std::vector<float> read(const cl::Buffer& b, std::size_t n) {
    std::vector<float> host(n);
    queue.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(float), host.data());
    return host;
  }
};

}  // namespace wstune::test
