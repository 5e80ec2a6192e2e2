// wstune run: one kernel on one device with one local size, verified and timed.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "table.hpp"
#include "wstune/error.hpp"
#include "wstune/json.hpp"
#include "wstune/runner.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

int run_main(int argc, char** argv) {
  po::options_description desc("wstune run options");
  std::string kernel, size, device, local_text;
  unsigned repeat = 5, warmup = 1;
  std::uint64_t seed = 42;
  desc.add_options()
      ("kernel,k", po::value(&kernel)->required(), "kernel: matmul, bilinear, sort or trapezoid")
      ("size,s", po::value(&size), "problem size (kernel-specific; default: the paper's Table 3 size)")
      ("device,d", po::value(&device)->default_value("default"), "device: P:D, cpu, gpu or a name substring")
      ("local,l", po::value(&local_text)->default_value("null"), "local work size X or X,Y, or null for the driver's choice")
      ("repeat,r", po::value(&repeat)->default_value(5), "timed repetitions")
      ("warmup", po::value(&warmup)->default_value(1), "untimed warm-up runs")
      ("seed", po::value(&seed)->default_value(42), "input seed")
      ("json", "print JSON");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune run --kernel K [--size S] [--device D] [--local X[,Y] | --local null] "
                     "[--repeat N] [--json]\n\nRuns one kernel on one device, verifies it against the CPU "
                     "reference and prints kernel and transfer times (OpenCL profiling events).",
                     desc, vm, nullptr, {"device"})) return 0;
  if (repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  const KernelSpec& spec = kernel_spec(kernel);
  const Problem p = problem_option(spec, vm, size);
  const LocalSize local = parse_local_size(local_text);
  const Device dev = select_device(enumerate_devices(), device);
  DeviceRunner runner(dev, spec);
  if (std::string why = runner.check_local(p, spec.whole(p), local); !why.empty()) {
    throw UsageError(fmt::format("--local {} cannot run {} {} on '{}': {}; pick a divisor of the global "
                                 "size {} (see 'wstune tune') or --local null", local_text, kernel, p.text,
                                 dev.info.name, why, to_string(spec.global_size(p))));
  }
  Verdict verdict;
  const RunResult r = run_and_verify(runner, p, local, TimingOptions{warmup, repeat}, seed, &verdict);
  if (vm.count("json")) {
    nlohmann::json j = to_json(r);
    j["kernel_name"] = kernel;
    j["size"] = p.text;
    j["global"] = to_json(runner.launch_global(p, spec.whole(p), local));
    j["device"] = to_json(dev.info);
    j["verify"] = {{"ok", verdict.ok}, {"max_error", verdict.max_error}, {"tolerance", verdict.tolerance},
                   {"detail", verdict.detail}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} {} on {} ({}), global {}, local {}\n", kernel, p.text, dev.info.name,
                             dev.info.id(), to_string(runner.launch_global(p, spec.whole(p), local)),
                             to_string(local));
    Table t({"phase", "median ms", "min ms", "max ms", "samples"});
    auto row = [&](const char* name, const Samples& s) {
      t.add({name, fmt::format("{:.4f}", s.median()), fmt::format("{:.4f}", s.min()), fmt::format("{:.4f}", s.max()),
             fmt::format("{}", s.size())});
    };
    row("host->device", r.h2d);
    row("kernel", r.kernel);
    row("device->host", r.d2h);
    t.print(std::cout);
    std::cout << fmt::format("status: {}{}\n", to_string(r.status), r.error.empty() ? "" : " - " + r.error);
    if (r.ok()) std::cout << fmt::format("verified: {} = {:.3g} (tolerance {:.3g})\n", verdict.detail, verdict.max_error, verdict.tolerance);
  }
  return r.ok() ? 0 : 1;
}

WSTUNE_COMMAND("run", "run one kernel on one device, verify it and print its times", run_main);

}  // namespace
}  // namespace wstune::cli
