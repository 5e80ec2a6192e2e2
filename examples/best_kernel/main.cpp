// An OpenCL app that builds the best known kernel for sizes it never tuned:
// wstune::Tuner::build_best reads the T1 tuning file of a 5-point stencil
// (share/examples/kernels/stencil5.json), asks the parameter look-up chain
// for each size (exact, nearest tuned size, same architecture, same vendor
// and type, the file's Default values, the reference configuration), builds
// the program in the app's context and returns the kernel with its NDRange.
// The app sets the arguments, runs it, checks the result and prints the
// level of each answer.
// Build:  cmake -S examples/best_kernel -B build -DCMAKE_PREFIX_PATH=PREFIX
// Usage:  best_kernel TUNING_FILE SIZE...   (e.g. stencil5.json 200x300 1000x1000)
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <wstune/tuner.hpp>

namespace {

// The stencil on the CPU: out = 5c - the four neighbours inside, c on the border.
float expected(const std::vector<float>& in, int w, int h, int x, int y) {
  const std::size_t i = static_cast<std::size_t>(y) * w + x;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) return in[i];
  return 5.0f * in[i] - in[i - w] - in[i + w] - in[i - 1] - in[i + 1];
}

// Runs one size; false when the result is wrong.
bool run(wstune::Tuner& tuner, const cl::Context& ctx, const cl::CommandQueue& queue, const std::string& file,
         const std::string& size) {
  const wstune::BuiltKernel b = tuner.build_best(queue, file, size);
  const int w = std::stoi(size.substr(0, size.find('x'))), h = std::stoi(size.substr(size.find('x') + 1));
  std::vector<float> in(static_cast<std::size_t>(w) * h), out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7) % 13);
  cl::Buffer bin(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.size() * sizeof(float), in.data());
  cl::Buffer bout(ctx, CL_MEM_WRITE_ONLY, out.size() * sizeof(float));
  cl::Kernel k = b.kernel;
  k.setArg(0, w);
  k.setArg(1, h);
  k.setArg(2, bin);
  k.setArg(3, bout);
  queue.enqueueNDRangeKernel(k, cl::NullRange, b.global, b.local);
  queue.enqueueReadBuffer(bout, CL_TRUE, 0, out.size() * sizeof(float), out.data());
  bool ok = true;
  for (int y = 0; y < h && ok; ++y)
    for (int x = 0; x < w && ok; ++x) ok = out[static_cast<std::size_t>(y) * w + x] == expected(in, w, h, x, y);
  std::cout << "size " << size << ": level " << wstune::to_string(b.level) << ", parameters " << b.params << ", global "
            << b.global[0] << "x" << b.global[1] << ", local "
            << (b.local.dimensions() ? std::to_string(b.local[0]) + "x" + std::to_string(b.local[1]) : "NULL")
            << ", compile " << b.compile_ms << " ms, " << (ok ? "result verified" : "WRONG RESULT") << "\n";
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 3) {
    std::cerr << "usage: best_kernel TUNING_FILE SIZE...  (e.g. stencil5.json 200x300)\n";
    return 2;
  }
  cl::Device device = cl::Device::getDefault();
  cl::Context ctx(device);
  cl::CommandQueue queue(ctx, device);
  wstune::Tuner tuner;  // the database in WSTUNE_DB, else the default
  bool ok = true;
  for (int i = 2; i < argc; ++i) ok = run(tuner, ctx, queue, argv[1], argv[i]) && ok;
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "best_kernel: " << e.what() << "\n";
  return 1;
}
