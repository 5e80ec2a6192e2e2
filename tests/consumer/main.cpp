// Links the installed libwstune through its public headers only: lists the
// devices, builds a kernel as an app does and asks the Tuner for its local
// work size (a fresh database: the answer comes from the rule or NULL).
#include <cstdlib>
#include <iostream>

#include <wstune/device.hpp>
#include <wstune/tuner.hpp>
#include <wstune/version.hpp>

int main() try {
  auto devices = wstune::enumerate_devices();
  if (devices.empty()) {
    std::cerr << "consumer: no OpenCL device\n";
    return 1;
  }
  const wstune::Device& d = devices.front();
  cl::Context ctx(d.device);
  cl::CommandQueue queue(ctx, d.device);
  cl::Program program(ctx, "__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }");
  program.build({d.device});
  cl::Kernel kernel(program, "twice");
  cl::Buffer buf(ctx, CL_MEM_READ_WRITE, 4096 * sizeof(float));
  wstune::Tuner tuner(std::getenv("WSTUNE_DB") ? std::getenv("WSTUNE_DB") : "");
  tuner.set_arg(kernel, 0, buf);
  const wstune::LookupResult r = tuner.launch(queue, kernel, cl::NDRange(4096));
  queue.finish();
  std::cout << "wstune " << wstune::version() << " on " << d.info.name << ": local " << wstune::to_string(r.local)
            << " (" << wstune::to_string(r.level) << ")\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "consumer: " << e.what() << "\n";
  return 1;
}
