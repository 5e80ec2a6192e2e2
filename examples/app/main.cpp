// An OpenCL app using wstune at run time: it builds its own kernel, asks
// wstune::Tuner for the local work size (look-up chain over the database in
// WSTUNE_DB or $XDG_DATA_HOME/wstune/wstune.db), lets it tune online within
// a small budget when nothing is stored (trials never change what the app
// computes), enqueues, and checks the result.
// Build:  cmake -S examples/app -B build -DCMAKE_PREFIX_PATH=PREFIX
//   or:   c++ main.cpp $(pkg-config --cflags --libs wstune) -o app
// Usage: wstune_example_app [WIDTH HEIGHT]   (default 256 128)
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <wstune/tuner.hpp>

static const char* kSource = R"CL(
__kernel void saxpy2d(float a, __global const float* x, __global float* y) {
  const size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
  y[i] = a * x[i] + 1.0f;
}
)CL";

int main(int argc, char** argv) try {
  const std::size_t w = argc > 2 ? std::stoul(argv[1]) : 256, h = argc > 2 ? std::stoul(argv[2]) : 128;
  cl::Device device = cl::Device::getDefault();
  cl::Context ctx(device);
  cl::CommandQueue queue(ctx, device);
  cl::Program program(ctx, kSource);
  program.build({device});
  cl::Kernel kernel(program, "saxpy2d");
  std::vector<float> x(w * h), y(w * h);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000);
  cl::Buffer bx(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, x.size() * sizeof(float), x.data());
  cl::Buffer by(ctx, CL_MEM_WRITE_ONLY, y.size() * sizeof(float));

  wstune::TunerOptions options;
  options.tune_online = true;  // tune when nothing exact or near is stored
  options.online_max_trials = 6;
  wstune::Tuner tuner({}, options);
  kernel.setArg(0, 3.0f);
  kernel.setArg(1, bx);
  tuner.set_arg(kernel, 2, by);  // written: wstune restores it after its trials
  const wstune::LookupResult r = tuner.launch(queue, kernel, cl::NDRange(w, h));
  queue.enqueueReadBuffer(by, CL_TRUE, 0, y.size() * sizeof(float), y.data());
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (y[i] != 3.0f * x[i] + 1.0f) {
      std::cerr << "wrong result at " << i << "\n";
      return 1;
    }
  }
  std::cout << "saxpy2d " << w << "x" << h << " on " << tuner.device_info(queue()).name << ": local "
            << wstune::to_string(r.local) << " (" << wstune::to_string(r.level) << "), result verified\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "wstune_example_app: " << e.what() << "\n";
  return 1;
}
