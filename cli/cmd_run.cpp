// wstune run: one kernel on one device with one local size, verified and timed.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "format/json.hpp"
#include "runner/runner.hpp"
#include "table.hpp"
#include "wstune/error.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

// The values of `wstune run`'s options.
struct RunArgs {
  std::string kernel, kernel_file, size, device, local_text, config_text;
  unsigned repeat = 5, warmup = 1;
  std::uint64_t seed = 42;
};

// Parses `wstune run`'s command line into `a` and `vm`, --repeat checked;
// false when --help printed the usage instead.
bool parse_run_args(int argc, char** argv, RunArgs& a, po::variables_map& vm) {
  po::options_description desc("wstune run options");
  add_kernel_options(desc, a.kernel, a.kernel_file);
  desc.add_options()("size,s", po::value(&a.size),
                     "problem size (kernel-specific; default: the paper's size or the file's ProblemSize)")(
      "device,d", po::value(&a.device)->default_value("default"), "device: P:D, cpu, gpu or a name substring")(
      "config,c", po::value(&a.config_text),
      "tuning parameter values NAME=V,... (default: the file's reference configuration)")(
      "local,l", po::value(&a.local_text),
      "local work size X, X,Y or X,Y,Z, or null for the driver's choice "
      "(default: null, or the local size the parameters set)")("repeat,r", po::value(&a.repeat)->default_value(5),
                                                               "timed repetitions")(
      "warmup", po::value(&a.warmup)->default_value(1), "untimed warm-up runs")(
      "seed", po::value(&a.seed)->default_value(42), "input seed")("json", "print JSON");
  if (!parse_options(
          argc, argv,
          "usage: wstune run (--kernel K | --kernel-file FILE) [--size S] [--device D] [--config NAME=V,...]\n"
          "                  [--local X[,Y[,Z]] | --local null] [--repeat N] [--json]\n\n"
          "Runs one configuration of one kernel on one device, verifies its outputs (against the CPU\n"
          "reference, the tuning file's ReferenceArguments, or its reference configuration) and prints\n"
          "kernel and transfer times (OpenCL profiling events).",
          desc, vm, nullptr, {"device"}))
    return false;
  if (a.repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  return true;
}

// The local size to run: --local when given (a usage error when the tuning
// file's parameters set the local size), else the one the parameters set.
LocalSize local_option(const KernelSpec& spec, const Problem& p, const po::variables_map& vm, const std::string& text) {
  const LocalSize local = vm.count("local") ? parse_local_size(text) : spec.parameter_local(p);
  if (vm.count("local") && spec.parameter_local(p)) {
    throw UsageError(
        fmt::format("--local {}: {}'s tuning file sets the local size from its parameters ({}); drop "
                    "--local or set the parameters with --config",
                    text, spec.name(), to_string(spec.parameter_local(p))));
  }
  return local;
}

// A usage error when the device cannot run `p` with `local` (e.g. the local size exceeds its limits).
void check_runnable(DeviceRunner& runner, const Device& dev, const KernelSpec& spec, const Problem& p,
                    const LocalSize& local) {
  // As a tune's runs: the build's own limits (CL_KERNEL_WORK_GROUP_SIZE, a
  // GPU's local memory) are left to the launch, whose refusal is reported.
  if (std::string why = runner.check_local(p, spec.whole(p), local, false); !why.empty()) {
    throw UsageError(
        fmt::format("{} cannot run {} {} on '{}': {}; pick another local size (see 'wstune tune') "
                    "or --local null",
                    to_string(Configuration{p.params, local}), spec.name(), p.text, dev.info.name, why));
  }
}

// One verified run and what ran it: what the outputs show.
struct RunReport {
  const KernelSpec& spec;
  const Problem& p;
  const Device& dev;
  const DeviceRunner& runner;
  const LocalSize& local;
  const RunResult& r;
  const Verdict& verdict;
  // The NDRange launched.
  [[nodiscard]] Extent global() const { return runner.launch_global(p, spec.whole(p), local); }
};

// The run as JSON: its times and status, what ran where, and the verification.
void print_json(const RunReport& rep) {
  const Verdict& v = rep.verdict;
  nlohmann::json j = to_json(rep.r);
  j["kernel_name"] = std::string(rep.spec.name());
  j["params"] = rep.p.params;
  j["size"] = rep.p.text;
  j["global"] = to_json(rep.global());
  j["device"] = to_json(rep.dev.info);
  j["verify"] = {{"ok", v.ok}, {"max_error", v.max_error}, {"tolerance", v.tolerance}, {"detail", v.detail}};
  std::cout << j.dump(2) << "\n";
}

// The times of the transfers and the kernel, one row a phase.
void print_times(const RunResult& r) {
  Table t({"phase", "median ms", "min ms", "max ms", "samples"});
  auto row = [&](const char* name, const Samples& s) {
    t.add({name, fmt::format("{:.4f}", s.median()), fmt::format("{:.4f}", s.min()), fmt::format("{:.4f}", s.max()),
           fmt::format("{}", s.size())});
  };
  row("host->device", r.h2d);
  row("kernel", r.kernel);
  row("device->host", r.d2h);
  t.print(std::cout);
}

// The run as text: what ran where, the times, the status and the verification.
void print_table(const RunReport& rep) {
  const Problem& p = rep.p;
  const RunResult& r = rep.r;
  const Verdict& v = rep.verdict;
  std::cout << fmt::format("{} {}{} on {} ({}), global {}, local {}\n", rep.spec.name(), p.text,
                           p.params.empty() ? "" : fmt::format(" {}", to_string(Configuration{p.params, rep.local})),
                           rep.dev.info.name, rep.dev.info.id(), to_string(rep.global()), to_string(rep.local));
  print_times(r);
  std::cout << fmt::format("status: {}{}\n", to_string(r.status), r.error.empty() ? "" : " - " + r.error);
  if (r.ok())
    std::cout << fmt::format("verified: {} = {:.3g} (tolerance {:.3g})\n", v.detail, v.max_error, v.tolerance);
}

int run_main(int argc, char** argv) {
  RunArgs a;
  po::variables_map vm;
  if (!parse_run_args(argc, argv, a, vm)) return 0;
  const auto spec_ptr = kernel_option(a.kernel, a.kernel_file);
  const KernelSpec& spec = *spec_ptr;
  const Problem base = problem_option(spec, vm, a.size);
  const Problem p = with_params(base, config_option(spec, base, a.config_text));
  const LocalSize local = local_option(spec, p, vm, a.local_text);
  const Device dev = select_device(enumerate_devices(), a.device);
  DeviceRunner runner(dev, spec);
  check_runnable(runner, dev, spec, p, local);
  Verdict verdict;
  const RunResult r = run_and_verify(runner, p, local, TimingOptions{a.warmup, a.repeat}, a.seed, &verdict);
  const RunReport report{spec, p, dev, runner, local, r, verdict};
  if (vm.count("json")) {
    print_json(report);
  } else {
    print_table(report);
  }
  return r.ok() ? 0 : 1;
}

WSTUNE_COMMAND("run", "run one kernel on one device, verify it and print its times", run_main);

}  // namespace
}  // namespace wstune::cli
