// wstune split: split one kernel's NDRange across several devices by a model
// (pe-ratio, proportional, measured), optionally run it concurrently, or
// sweep the split ratio of two devices for the oracle.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "table.hpp"
#include "wstune/error.hpp"
#include "wstune/json.hpp"
#include "wstune/multi_device.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto end = text.find(sep, pos);
    out.push_back(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

nlohmann::json slice_json(const SliceResult& s) {
  return {{"device_id", s.device_id}, {"device_name", s.device_name}, {"begin", s.block.begin},
          {"end", s.block.end}, {"local", to_json(s.local)}, {"status", std::string(to_string(s.status))},
          {"error", s.error}, {"kernel", to_json(s.kernel)}, {"h2d", to_json(s.h2d)}, {"d2h", to_json(s.d2h)},
          {"wall", to_json(s.wall)}};
}

nlohmann::json run_json(const SplitRunResult& r) {
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : r.slices) slices.push_back(slice_json(s));
  return {{"status", std::string(to_string(r.status))}, {"error", r.error}, {"makespan", to_json(r.makespan)},
          {"host_finish_ms", r.host_finish_ms}, {"slices", slices},
          {"verify", {{"ok", r.verdict.ok}, {"max_error", r.verdict.max_error}, {"detail", r.verdict.detail}}}};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!(f << text)) throw UsageError(fmt::format("cannot write '{}': check the directory exists and is writable", path));
}

int split_main(int argc, char** argv) {
  po::options_description desc("wstune split options");
  std::string kernel, size, devices_text, model_text, direction_text, local_text, csv_path, svg_path, cal_path;
  unsigned repeat = 5, warmup = 1, refine = 2;
  double sweep = 0;
  std::uint64_t seed = 42;
  desc.add_options()
      ("kernel,k", po::value(&kernel)->required(), "kernel: matmul, bilinear, sort or trapezoid")
      ("size,s", po::value(&size), "problem size (default: the paper's Table 3 size)")
      ("devices,d", po::value(&devices_text)->required(), "devices D1,D2[,...]: each P:D, cpu, gpu or a name substring")
      ("model,m", po::value(&model_text)->default_value("pe-ratio"), "pe-ratio, proportional or measured")
      ("direction", po::value(&direction_text)->default_value("auto"), "split along x, y or auto (from the kernel's priority)")
      ("local,l", po::value(&local_text)->default_value("null"),
       "local size for all devices (null, rule or X,Y) or one per device separated by '/', e.g. 16,8/null")
      ("run", "run the split on all devices at once, verify and report times")
      ("sweep", po::value(&sweep), "sweep two devices' split ratio in STEP % steps (1 % near the best)")
      ("csv", po::value(&csv_path), "with --sweep: write the curve as CSV to this file")
      ("svg", po::value(&svg_path), "with --sweep: write the curve as an SVG plot to this file")
      ("calibration", po::value(&cal_path), "measured model: read the calibration from this JSON file if it "
                                             "exists and matches, else calibrate and write it there")
      ("refine", po::value(&refine)->default_value(2), "measured model: concurrent refinement rounds")
      ("repeat,r", po::value(&repeat)->default_value(5), "timed repetitions")
      ("warmup", po::value(&warmup)->default_value(1), "untimed warm-up rounds")
      ("seed", po::value(&seed)->default_value(42), "input seed")
      ("json", "print JSON");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune split --kernel K [--size S] --devices D1,D2[,...] [--model pe-ratio|proportional|"
                     "measured] [--direction x|y|auto] [--local null|rule|X,Y[/...]] [--run] [--sweep STEP] [--json]\n\n"
                     "Splits one NDRange across several devices and prints each device's share; --run executes "
                     "it on all devices at once and reports per-device times and the makespan.",
                     desc, vm, nullptr, {"devices"})) return 0;
  if (repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  const KernelSpec& spec = kernel_spec(kernel);
  const Problem p = problem_option(spec, vm, size);
  const SplitModel model = parse_split_model(model_text);
  const unsigned dim = split_dimension(spec.dims(), spec.priority(), parse_split_direction(direction_text));
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& sel : split_list(devices_text, ',')) devices.push_back(select_device(all, sel));
  const TimingOptions timing{warmup, repeat};

  // Local sizes: std::nullopt (outer) means "by the rule".
  std::vector<std::optional<LocalSize>> fixed;
  const auto local_parts = split_list(local_text, '/');
  if (local_parts.size() != 1 && local_parts.size() != devices.size()) {
    throw UsageError(fmt::format("--local '{}' has {} entries for {} devices: give one for all or one per device "
                                 "separated by '/'", local_text, local_parts.size(), devices.size()));
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& t = local_parts[local_parts.size() == 1 ? 0 : i];
    if (t == "rule") fixed.emplace_back(std::nullopt); else fixed.emplace_back(parse_local_size(t));
  }
  bool any_rule = false;
  for (const auto& f : fixed) any_rule = any_rule || !f.has_value();
  // Blocks are chosen with the given local sizes (rule devices: granularity 1),
  // then rule devices get the rule's local size for their block.
  std::vector<LocalSize> locals;
  for (const auto& f : fixed) locals.push_back(f ? *f : LocalSize{});

  MultiDeviceRunner runner(devices, spec, p, seed);
  const bool json = vm.count("json") > 0;
  nlohmann::json out{{"kernel_name", kernel}, {"size", p.text}, {"dim", dim == 0 ? "x" : "y"},
                     {"compute_amount", spec.compute_amount(p)},
                     {"compute_class", std::string(to_string(compute_class(spec.compute_amount(p))))}};

  if (vm.count("sweep")) {
    if (any_rule) throw UsageError("--sweep with --local rule is not supported: give X,Y or null per device");
    const auto points = sweep_two(runner, dim, locals, timing, sweep, std::min(1.0, sweep));
    const SweepPoint* best = best_point(points);
    const std::string csv = sweep_csv(points);
    if (!csv_path.empty()) write_file(csv_path, csv);
    if (!svg_path.empty()) {
      write_file(svg_path, svg::render(sweep_plot(points, fmt::format("{} {}: makespan over the split", kernel, p.text),
                                                  devices[0].info.name, devices[1].info.name)));
    }
    if (json) {
      nlohmann::json pts = nlohmann::json::array();
      for (const auto& pt : points) pts.push_back({{"percent_first", pt.percent_first}, {"run", run_json(pt.result)}});
      out["sweep"] = pts;
      if (best) out["best_percent_first"] = best->percent_first;
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << csv;
      if (best) {
        std::cout << fmt::format("best: {:g} % on {} ({} units), makespan {:.4f} ms\n", best->percent_first,
                                 devices[0].info.name, best->blocks[0].size(), best->result.makespan.median());
      }
    }
    return best ? 0 : 1;
  }

  Calibration cal;
  if (model == SplitModel::measured) {
    bool loaded = false;
    if (!cal_path.empty()) {
      if (std::ifstream f(cal_path); f) {
        try {
          cal = calibration_from_json(nlohmann::json::parse(f));
        } catch (const nlohmann::json::exception& e) {
          throw UsageError(fmt::format("--calibration '{}' is not a calibration ({}); delete it to recalibrate",
                                       cal_path, e.what()));
        }
        loaded = cal.kernel == kernel && cal.size == p.text && cal.dim == dim && cal.devices.size() == devices.size();
        for (std::size_t i = 0; loaded && i < devices.size(); ++i) {
          loaded = cal.devices[i].fingerprint == devices[i].info.fingerprint() &&
                   cal.devices[i].local == to_string(locals[i]);
        }
      }
    }
    if (!loaded) {
      if (!json) std::cerr << "calibrating each device alone (a few slice sizes)...\n";
      cal = runner.calibrate_all(dim, locals, timing);
    }
  }
  std::vector<Block> blocks = model == SplitModel::measured && refine > 0
                                  ? refine_measured(runner, cal, locals, timing, refine)
                                  : model_blocks(model, runner, dim, locals, model == SplitModel::measured ? &cal : nullptr);
  if (model == SplitModel::measured && !cal_path.empty()) write_file(cal_path, to_json(cal).dump(2) + "\n");
  if (any_rule) locals = resolve_locals(runner, blocks, fixed, paper_local_rule);

  const std::size_t total = spec.split_units(p, dim);
  nlohmann::json shares = nlohmann::json::array();
  Table t({"device", "id", "PEs", "share %", "units", "range", "local"});
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& info = devices[i].info;
    const double pct = 100.0 * static_cast<double>(blocks[i].size()) / static_cast<double>(total);
    t.add({info.name, info.id(), fmt::format("{}", info.total_pe()), fmt::format("{:.2f}", pct),
           fmt::format("{}", blocks[i].size()), fmt::format("[{}, {})", blocks[i].begin, blocks[i].end),
           to_string(locals[i])});
    shares.push_back({{"device", to_json(info)}, {"percent", pct}, {"begin", blocks[i].begin},
                      {"end", blocks[i].end}, {"local", to_json(locals[i])}});
  }
  out["model"] = std::string(to_string(model));
  out["shares"] = shares;
  if (model == SplitModel::measured) out["calibration"] = to_json(cal);
  if (!json) {
    std::cout << fmt::format("{} {} split along {} by {} (C = {:.3g}, {} class), {} units\n", kernel, p.text,
                             dim == 0 ? "x" : "y", to_string(model), spec.compute_amount(p),
                             to_string(compute_class(spec.compute_amount(p))), total);
    t.print(std::cout);
  }
  int status = 0;
  if (vm.count("run")) {
    const SplitRunResult r = runner.run(blocks, locals, timing);
    status = r.ok() ? 0 : 1;
    out["run"] = run_json(r);
    if (!json) {
      Table rt({"device", "kernel ms", "h2d ms", "d2h ms", "wall ms"});
      for (const auto& s : r.slices) {
        if (s.block.size() == 0) continue;
        rt.add({s.device_name, fmt::format("{:.4f}", s.kernel.median()), fmt::format("{:.4f}", s.h2d.median()),
                fmt::format("{:.4f}", s.d2h.median()), fmt::format("{:.4f}", s.wall.median())});
      }
      std::cout << "\n";
      rt.print(std::cout);
      std::cout << fmt::format("makespan: {:.4f} ms median (min {:.4f}, {} rounds); host gather+finish {:.4f} ms\n",
                               r.makespan.median(), r.makespan.min(), r.makespan.size(), r.host_finish_ms);
      std::cout << fmt::format("status: {}{}\n", to_string(r.status), r.error.empty() ? "" : " - " + r.error);
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return status;
}

WSTUNE_COMMAND("split", "split one kernel across several devices (pe-ratio, proportional, measured), run or sweep it",
               split_main);

}  // namespace
}  // namespace wstune::cli
