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
  std::string kernel, kernel_file, size, device, local_text, config_text;
  unsigned repeat = 5, warmup = 1;
  std::uint64_t seed = 42;
  add_kernel_options(desc, kernel, kernel_file);
  desc.add_options()
      ("size,s", po::value(&size), "problem size (kernel-specific; default: the paper's size or the file's ProblemSize)")
      ("device,d", po::value(&device)->default_value("default"), "device: P:D, cpu, gpu or a name substring")
      ("config,c", po::value(&config_text), "tuning parameter values NAME=V,... (default: the file's reference configuration)")
      ("local,l", po::value(&local_text), "local work size X, X,Y or X,Y,Z, or null for the driver's choice "
                                          "(default: null, or the local size the parameters set)")
      ("repeat,r", po::value(&repeat)->default_value(5), "timed repetitions")
      ("warmup", po::value(&warmup)->default_value(1), "untimed warm-up runs")
      ("seed", po::value(&seed)->default_value(42), "input seed")
      ("json", "print JSON");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune run (--kernel K | --kernel-file FILE) [--size S] [--device D] [--config NAME=V,...]\n"
                     "                  [--local X[,Y[,Z]] | --local null] [--repeat N] [--json]\n\n"
                     "Runs one configuration of one kernel on one device, verifies its outputs (against the CPU\n"
                     "reference, the tuning file's ReferenceArguments, or its reference configuration) and prints\n"
                     "kernel and transfer times (OpenCL profiling events).",
                     desc, vm, nullptr, {"device"})) return 0;
  if (repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  const auto spec_ptr = kernel_option(kernel, kernel_file);
  const KernelSpec& spec = *spec_ptr;
  const Problem base = problem_option(spec, vm, size);
  const Problem p = with_params(base, config_option(spec, base, config_text));
  LocalSize local = vm.count("local") ? parse_local_size(local_text) : spec.parameter_local(p);
  if (vm.count("local") && spec.parameter_local(p)) {
    throw UsageError(fmt::format("--local {}: {}'s tuning file sets the local size from its parameters ({}); drop "
                                 "--local or set the parameters with --config", local_text, spec.name(),
                                 to_string(spec.parameter_local(p))));
  }
  const Device dev = select_device(enumerate_devices(), device);
  DeviceRunner runner(dev, spec);
  if (std::string why = runner.check_local(p, spec.whole(p), local); !why.empty()) {
    throw UsageError(fmt::format("{} cannot run {} {} on '{}': {}; pick another local size (see 'wstune tune') "
                                 "or --local null", to_string(Configuration{p.params, local}), spec.name(), p.text,
                                 dev.info.name, why));
  }
  Verdict verdict;
  const RunResult r = run_and_verify(runner, p, local, TimingOptions{warmup, repeat}, seed, &verdict);
  if (vm.count("json")) {
    nlohmann::json j = to_json(r);
    j["kernel_name"] = std::string(spec.name());
    j["params"] = p.params;
    j["size"] = p.text;
    j["global"] = to_json(runner.launch_global(p, spec.whole(p), local));
    j["device"] = to_json(dev.info);
    j["verify"] = {{"ok", verdict.ok}, {"max_error", verdict.max_error}, {"tolerance", verdict.tolerance},
                   {"detail", verdict.detail}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} {}{} on {} ({}), global {}, local {}\n", spec.name(), p.text,
                             p.params.empty() ? "" : " " + to_string(Configuration{p.params, local}), dev.info.name,
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
