// An OpenCL app that builds the best known kernel for sizes it never tuned:
// wstune::Tuner::build_best reads the T1 tuning file of a 5-point stencil
// (share/examples/kernels/stencil5.json), asks the parameter look-up chain
// for each size (exact, nearest tuned size, same architecture, same vendor
// and type, the file's Default values, the reference configuration), builds
// the program in the app's context and returns the kernel with its NDRange.
// The app sets the arguments, runs it, checks the result and prints the
// level of each answer. With --tune-online a size with no exact stored best
// is first tuned (at most 8 configurations, 5 s; level "online"), so the
// next start answers "exact". Programs go through the persistent binary
// cache: the last line counts this process's programs compiled from source
// and loaded from the cache (a second start compiles nothing).
// Build:  cmake -S examples/best_kernel -B build -DCMAKE_PREFIX_PATH=PREFIX
// Usage:  best_kernel [--tune-online] TUNING_FILE SIZE...   (e.g. stencil5.json 200x300 1000x1000)
#include <chrono>
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
            << (b.local.dimensions() ? std::to_string(b.local[0]) + "x" + std::to_string(b.local[1]) : "NULL") << ", "
            << (b.compiled ? "compiled" : "not compiled") << " (" << b.compile_ms << " ms)";
  if (b.tuned_evaluations) std::cout << ", tuned online: " << b.tuned_evaluations << " configurations";
  if (!b.note.empty()) std::cout << ", note: " << b.note;
  std::cout << ", " << (ok ? "result verified" : "WRONG RESULT") << "\n";
  return ok;
}

// The first GPU of any platform, else the default device (PoCL's CPU here):
// an app tunes where its kernels run, and a GPU machine's first platform may
// be a CPU's.
cl::Device app_device() {
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  for (const cl::Platform& p : platforms) {
    std::vector<cl::Device> gpus;
    if (p.getDevices(CL_DEVICE_TYPE_GPU, &gpus) == CL_SUCCESS && !gpus.empty()) return gpus.front();
  }
  return cl::Device::getDefault();
}

}  // namespace

int main(int argc, char** argv) try {
  const bool tune_online = argc > 1 && std::string(argv[1]) == "--tune-online";
  const int first = tune_online ? 2 : 1;
  if (argc < first + 2) {
    std::cerr << "usage: best_kernel [--tune-online] TUNING_FILE SIZE...  (e.g. stencil5.json 200x300)\n";
    return 2;
  }
  cl::Device device = app_device();
  std::cout << "device: " << device.getInfo<CL_DEVICE_NAME>() << "\n";
  cl::Context ctx(device);
  cl::CommandQueue queue(ctx, device);
  wstune::TunerOptions options;
  options.build_best_online = {tune_online, 8, std::chrono::seconds(5)};
  wstune::Tuner tuner({}, options);  // the database in WSTUNE_DB, else the default
  bool ok = true;
  for (int i = first + 1; i < argc; ++i) ok = run(tuner, ctx, queue, argv[first], argv[i]) && ok;
  const wstune::ProgramBuilds builds = wstune::program_builds();
  std::cout << "programs compiled from source: " << builds.compiled
            << ", loaded from the binary cache: " << builds.from_binary << "\n";
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "best_kernel: " << e.what() << "\n";
  return 1;
}
