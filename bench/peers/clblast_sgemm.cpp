// bench_clblast: CLBlast's tuned SGEMM next to wstune's naive matmul kernel
// (issue 7, peer comparison). For each size N it times, on one device:
//   - clblast::Gemm<float> (row-major, no transposes, alpha 1, beta 0):
//     wall clock around Gemm + clFinish, and the profiling event CLBlast
//     returns (its last kernel only, when it runs several);
//   - wstune's matmul kernel (kernels/matmul.cl) through DeviceRunner with the
//     driver's default local size (NULL) and with a given/tuned local size,
//     timed with profiling events.
// Every variant runs warm-up rounds first (CLBlast compiles its kernels on
// the first call; PoCL compiles each new local size on first use), then
// --repeat timed runs; medians are reported. CLBlast's result is checked
// against wstune's kernel output (max |difference| ≤ N·2^-20, the matmul
// descriptor's tolerance). Writes <out>/peers_clblast.csv and .md.
//
// Usage: bench_clblast [--device P:D|cpu|gpu|name] [--sizes 1024,4096]
//                      [--local X,Y | --local N=X,Y ...] [--repeat 10]
//                      [--warmup 2] [--out docs/results]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <clblast.h>
#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "kernel/kernel.hpp"
#include "runner/runner.hpp"
#include "wstune/device.hpp"
#include "wstune/error.hpp"
#include "wstune/timing.hpp"
#include "wstune/types.hpp"
#include "wstune/version.hpp"

namespace po = boost::program_options;
using namespace wstune;

namespace {

struct Row {
  std::string tool;     // "clblast" or "wstune"
  std::string variant;  // "sgemm", "sgemm (event)", "matmul NULL", "matmul local"
  std::size_t n = 0;
  std::string local;  // local size or "-"
  Samples ms;
  std::string status = "ok";
  std::string note;
};

double gflops(std::size_t n, double ms) {
  return ms > 0 ? 2.0 * std::pow(static_cast<double>(n), 3) / (ms * 1e6) : 0.0;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> v;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto end = std::min(text.find(',', pos), text.size());
    const std::string part = text.substr(pos, end - pos);
    std::size_t n = 0;
    try {
      std::size_t used = 0;
      n = std::stoul(part, &used);
      if (used != part.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n == 0 || n > 16384) {
      throw UsageError(
          fmt::format("--sizes '{}': '{}' is not a matrix side in 1..16384; write e.g. --sizes 1024,4096", text, part));
    }
    v.push_back(n);
    pos = end + 1;
  }
  return v;
}

/// --local "X,Y" (every size) or "N=X,Y" (size N only).
std::map<std::size_t, LocalSize> parse_locals(const std::vector<std::string>& items, LocalSize& all) {
  std::map<std::size_t, LocalSize> per;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      all = parse_local_size(item, "--local");
    } else {
      const auto sizes = parse_sizes(item.substr(0, eq));
      per[sizes.at(0)] = parse_local_size(item.substr(eq + 1), "--local");
    }
  }
  return per;
}

/// CLBlast SGEMM, C = A·B, on its own context/queue of the same device.
Row time_clblast(const Device& dev, std::size_t n, const HostBuffer& a, const HostBuffer& b, HostBuffer& c,
                 const TimingOptions& t, Samples& event_ms) {
  Row row{"clblast", "sgemm (wall, Gemm + clFinish)", n, "-", {}, "ok", ""};
  cl::Context ctx(dev.device);
  cl::CommandQueue q(ctx, dev.device, CL_QUEUE_PROFILING_ENABLE);
  const std::size_t bytes = n * n * sizeof(float);
  cl::Buffer da(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, const_cast<std::byte*>(a.data()));
  cl::Buffer db(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, const_cast<std::byte*>(b.data()));
  cl::Buffer dc(ctx, CL_MEM_READ_WRITE, bytes);
  cl_command_queue qh = q();
  for (unsigned i = 0; i < t.warmup + t.repetitions; ++i) {
    cl_event ev = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    const auto st = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                         n, n, n, 1.0f, da(), 0, n, db(), 0, n, 0.0f, dc(), 0, n, &qh, &ev);
    if (st != clblast::StatusCode::kSuccess) {
      row.status = "runtime";
      row.note = fmt::format("clblast::Gemm returned status {}", static_cast<int>(st));
      if (ev) clReleaseEvent(ev);
      return row;
    }
    WSTUNE_CL_CHECK(q.finish());
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cl_ulong s = 0, e = 0;
    if (ev) {
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, nullptr);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, nullptr);
      clReleaseEvent(ev);
    }
    if (i >= t.warmup) {
      row.ms.ms.push_back(wall);
      if (e > s) event_ms.ms.push_back(static_cast<double>(e - s) * 1e-6);
    }
  }
  c = HostBuffer::floats(n * n);
  WSTUNE_CL_CHECK(q.enqueueReadBuffer(dc, CL_TRUE, 0, bytes, c.data()));
  return row;
}

std::string md_escape(std::string s) {
  std::replace(s.begin(), s.end(), '|', '/');
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string device = "default", sizes_text = "1024,4096", out_dir = "docs/results";
  std::vector<std::string> local_items;
  unsigned repeat = 10, warmup = 2;
  po::options_description desc("bench_clblast options");
  desc.add_options()("help,h", "this help")("device,d", po::value(&device)->default_value(device),
                                            "device: P:D, cpu, gpu or a name substring")(
      "sizes", po::value(&sizes_text)->default_value(sizes_text), "square matrix sides N, comma-separated")(
      "local,l", po::value(&local_items)->composing(),
      "wstune matmul local size X,Y for every size, or N=X,Y for size N (repeatable; default 16,16)")(
      "repeat,r", po::value(&repeat)->default_value(repeat), "timed repetitions per variant (median reported)")(
      "warmup", po::value(&warmup)->default_value(warmup), "untimed warm-up runs per variant")(
      "out,o", po::value(&out_dir)->default_value(out_dir), "directory for peers_clblast.csv and .md");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "bench_clblast: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: bench_clblast [options]\nTimes CLBlast SGEMM and wstune's matmul kernel (NULL and a "
                 "given local size) on one device.\n\n"
              << desc;
    return 0;
  }
  if (repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 10");
  const auto sizes = parse_sizes(sizes_text);
  LocalSize all = Extent{16, 16, 2};
  const auto per = parse_locals(local_items, all);
  const Device dev = select_device(enumerate_devices(), device);
  const TimingOptions timing{warmup, repeat};
  const KernelSpec& spec = kernel_spec("matmul");

  std::vector<Row> rows;
  for (const std::size_t n : sizes) {
    std::cerr << fmt::format("bench_clblast: N={} on {}\n", n, dev.info.name);
    const Problem p = spec.parse_size(std::to_string(n));
    const auto inputs = spec.generate_inputs(p, 42);
    HostBuffer c_clblast;
    Samples ev;
    Row cb = time_clblast(dev, n, inputs.at(0), inputs.at(1), c_clblast, timing, ev);

    DeviceRunner runner(dev, spec);
    const Block whole = spec.whole(p);
    runner.upload(p, whole, spec.block_inputs(p, inputs, whole));
    const LocalSize tuned = per.count(n) ? per.at(n) : all;
    HostBuffer c_wstune;
    for (const LocalSize& local : {LocalSize{}, tuned}) {
      Row r{"wstune", local ? "matmul (given local)" : "matmul (NULL)", n, to_string(local), {}, "ok", ""};
      if (std::string why = runner.check_local(p, whole, local); !why.empty()) {
        r.status = "constraints";
        r.note = why;
      } else {
        RunResult res = runner.run(p, whole, local, timing);
        r.ms = res.kernel;
        r.status = std::string(to_string(res.status));
        r.note = res.error;
        if (res.ok() && c_wstune.empty()) c_wstune = std::move(res.outputs.at(0));
      }
      rows.push_back(std::move(r));
    }
    if (cb.status == "ok" && c_wstune.size() == c_clblast.size()) {
      double m = 0, mag = 0;
      const auto cc = c_clblast.as<float>(), cw = c_wstune.as<float>();
      for (std::size_t i = 0; i < cc.size(); ++i) {
        m = std::max(m, double(std::fabs(cc[i] - cw[i])));
        mag = std::max(mag, double(std::fabs(cw[i])));
      }
      const double tol = static_cast<double>(n) * std::ldexp(1.0, -20);
      cb.note =
          fmt::format("max abs(C_clblast - C_wstune) = {:.3g} (tolerance {:.3g}; max abs(C) = {:.3g})", m, tol, mag);
      if (!(m <= tol) || !(mag > 0)) cb.status = "correctness";
    }
    rows.insert(rows.end() - 2, cb);
    if (!ev.ms.empty()) {
      rows.insert(rows.end() - 2, Row{"clblast", "sgemm (profiling event, last kernel)", n, "-", ev, cb.status, ""});
    }
  }

  std::filesystem::create_directories(out_dir);
  const auto csv_path = std::filesystem::path(out_dir) / "peers_clblast.csv";
  const auto md_path = std::filesystem::path(out_dir) / "peers_clblast.md";
  std::ofstream csv(csv_path), md(md_path);
  csv << "tool,variant,device,n,local,median_ms,min_ms,max_ms,samples,gflops,vs_clblast,status,note\n";
  md << "# CLBlast SGEMM vs wstune matmul\n\n"
     << fmt::format(
            "Device: {} ({}), wstune {}, {} warm-up + {} timed runs, medians. "
            "Generated by `bench_clblast` (bench/peers/clblast_sgemm.cpp); see docs/peers.md.\n\n",
            dev.info.name, dev.info.platform, version(), warmup, repeat)
     << "| N | tool | variant | local | median ms | min ms | max ms | GFLOP/s | × CLBlast | status |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::size_t, double> clblast_ms;
  for (const auto& r : rows) {
    if (r.tool == "clblast" && r.variant.rfind("sgemm (wall", 0) == 0 && r.status == "ok")
      clblast_ms[r.n] = r.ms.median();
  }
  for (const auto& r : rows) {
    const double med = r.ms.median();
    const std::string vs = (clblast_ms.count(r.n) && med > 0) ? fmt::format("{:.2f}", med / clblast_ms[r.n]) : "";
    std::string note = r.note;
    std::replace(note.begin(), note.end(), ',', ';');
    std::replace(note.begin(), note.end(), '\n', ' ');
    csv << fmt::format("{},\"{}\",\"{}\",{},{},{:.4f},{:.4f},{:.4f},{},{:.2f},{},{},{}\n", r.tool, r.variant,
                       dev.info.name, r.n, r.local, med, r.ms.min(), r.ms.max(), r.ms.size(), gflops(r.n, med), vs,
                       r.status, note);
    md << fmt::format("| {} | {} | {} | {} | {:.4f} | {:.4f} | {:.4f} | {:.1f} | {} | {}{} |\n", r.n, r.tool, r.variant,
                      r.local, med, r.ms.min(), r.ms.max(), gflops(r.n, med), vs, r.status,
                      note.empty() ? "" : " — " + md_escape(note));
  }
  md << "\n× CLBlast: median time / CLBlast's wall-clock median at the same N (higher = slower than CLBlast). "
        "CLBlast's event time covers only the last kernel it enqueues; the wall clock covers the whole call.\n";
  std::cout << fmt::format("wrote {} and {}\n", csv_path.string(), md_path.string());
  for (const auto& r : rows) {
    std::cout << fmt::format("N={:5} {:8} {:38} {:8} median {:10.4f} ms  {:9.1f} GFLOP/s  {}\n", r.n, r.tool, r.variant,
                             r.local, r.ms.median(), gflops(r.n, r.ms.median()), r.status);
  }
  return 0;
} catch (const UsageError& e) {
  std::cerr << "bench_clblast: " << e.what() << "\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "bench_clblast: " << e.what() << "\n";
  return 1;
}
