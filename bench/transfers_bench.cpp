// bench_transfers: the split's data path on its devices (issue 18). First
// each device's pageable and pinned upload and download bandwidth
// (measure_bandwidth), then for each kernel and split model (pe-ratio,
// measured: calibrated, then refined online) one verified split run of
// --repeat rounds: per device the bytes moved, the achieved h2d and d2h
// bandwidth (profiling events, median) and its fraction of the device's
// measured pinned bandwidth, and the host's gather + finish time. Writes
//   <out>/transfers_<tag>.csv, <out>/transfers_<tag>.md,
//   <out>/transfers_<tag>_bandwidth.json
// With --overlap 1,N each split also runs as chunks over two queues
// (MultiDeviceRunner::set_overlap), the values interleaved over --passes,
// and a table compares their makespans. Target (reported, never asserted):
// transfers ≥ 80 % of the measured pinned bandwidth.
#include <iostream>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "bench_util.hpp"
#include "device/bandwidth.hpp"
#include "split/multi_device.hpp"

namespace po = boost::program_options;
using namespace wstune;

namespace {

using bench::split_list;
using bench::write;

struct Options {
  std::string devices_text, out_dir, tag, sizes_text, models_text, overlap_text;
  std::vector<std::size_t> overlaps;  // --overlap, parsed
  unsigned repeat = 5, warmup = 1, passes = 1;
  std::size_t bandwidth_bytes = std::size_t{256} << 20;
};

// One device's line of one split run.
struct Row {
  std::string kernel, size, model, devices, status, device, device_name;
  std::size_t overlap = 1, chunks = 1, units = 0, h2d_bytes = 0, d2h_bytes = 0;
  double makespan = 0, finish = 0, kernel_ms = 0, h2d_ms = 0, d2h_ms = 0, h2d_gbps = 0, d2h_gbps = 0;
  double pinned_h2d = 0, pinned_d2h = 0;
};

double fraction(double achieved, double measured) {
  return measured > 0 ? achieved / measured : 0;
}

// The blocks of `model`: pe-ratio from the PEs, measured from a calibration
// refined by two concurrent rounds.
// Along the kernel's split direction (as `wstune split --direction auto`).
std::vector<Block> model_split(const std::string& model, MultiDeviceRunner& runner, const TimingOptions& timing) {
  const std::vector<LocalSize> locals(runner.size(), std::nullopt);
  const KernelSpec& k = runner.spec();
  const unsigned dim = split_dimension(k.dims(), k.priority(), SplitDirection::auto_);
  if (model == "pe-ratio") return model_blocks(SplitModel::pe_ratio, runner, dim, locals);
  if (model != "measured") throw UsageError(fmt::format("--models: '{}' is not pe-ratio or measured", model));
  Calibration cal = runner.calibrate_all(dim, locals, timing, CalibrationBudget{250});
  return refine_measured(runner, cal, locals, timing, 2);
}

// One device's row of a split run; `makespan` is the median over its passes.
Row slice_row(const Options& o, const std::string& kernel, const std::string& size, const std::string& model,
              const SplitRunResult& r, const SliceResult& s, const DeviceBandwidth& bw, double makespan) {
  Row row{kernel, size, model, o.devices_text, std::string(to_string(r.status)), s.device_id, s.device_name};
  row.chunks = s.chunks;
  row.units = s.block.size();
  row.h2d_bytes = s.h2d_bytes;
  row.d2h_bytes = s.d2h_bytes;
  row.makespan = makespan;
  row.finish = r.host_finish_ms;
  row.kernel_ms = s.kernel.median();
  row.h2d_ms = s.h2d.median();
  row.d2h_ms = s.d2h.median();
  row.h2d_gbps = s.h2d_gbps();
  row.d2h_gbps = s.d2h_gbps();
  row.pinned_h2d = bw.pinned_h2d.gbps(bw.bytes);
  row.pinned_d2h = bw.pinned_d2h.gbps(bw.bytes);
  return row;
}

// The --overlap values (chunks per block), each ≥ 1; throws UsageError.
std::vector<std::size_t> parse_overlaps(const std::string& text) {
  std::vector<std::size_t> out;
  for (const auto& t : split_list(text, ',')) {
    std::size_t n = 0, used = 0;
    try {
      n = std::stoul(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (n == 0 || used != t.size())
      throw UsageError(fmt::format("--overlap '{}': give chunks per block, 1 or more, e.g. 1,2,4", text));
    out.push_back(n);
  }
  return out;
}

// One kernel: for each model its blocks, then a verified split run per
// overlap value, the values interleaved over --passes passes (one runner,
// so the CPU reference is computed once); one row per used device and
// overlap value, its makespan the median of every pass's rounds.
std::vector<Row> run_kernel(const Options& o, const std::vector<Device>& devices, const std::string& kernel,
                            const std::string& size, const std::vector<DeviceBandwidth>& bandwidth) {
  const KernelSpec& spec = kernel_spec(kernel);
  const TimingOptions timing{o.warmup, o.repeat};
  MultiDeviceRunner runner(devices, spec, spec.parse_size(size));
  const std::vector<LocalSize> locals(devices.size(), std::nullopt);
  std::vector<Row> rows;
  for (const auto& model : split_list(o.models_text, ',')) {
    std::cerr << fmt::format("{} {} {} on {}\n", kernel, size, model, o.devices_text);
    std::vector<Block> blocks;
    try {
      runner.set_overlap(1);
      blocks = model_split(model, runner, timing);
    } catch (const Error& e) {  // e.g. a calibration that ran no slice: reported, the others go on
      std::cerr << fmt::format("{} {} {}: no split: {}\n", kernel, size, model, e.what());
      continue;
    }
    const auto& ovs = o.overlaps;
    std::vector<SplitRunResult> last(ovs.size());
    std::vector<Samples> spans(ovs.size());
    for (unsigned pass = 0; pass < std::max(1u, o.passes); ++pass) {
      for (std::size_t v = 0; v < ovs.size(); ++v) {
        runner.set_overlap(ovs[v]);
        last[v] = runner.run(blocks, locals, timing);
        if (!last[v].ok()) {  // reported in its rows' status; its times stay out of the median
          std::cerr << fmt::format("{} {} {} overlap {}: {}\n", kernel, size, model, ovs[v], last[v].error);
          continue;
        }
        spans[v].ms.insert(spans[v].ms.end(), last[v].makespan.ms.begin(), last[v].makespan.ms.end());
      }
    }
    for (std::size_t v = 0; v < ovs.size(); ++v) {
      for (std::size_t i = 0; i < devices.size(); ++i) {
        if (!last[v].slices[i].block.size()) continue;
        rows.push_back(slice_row(o, kernel, size, model, last[v], last[v].slices[i], bandwidth[i], spans[v].median()));
        rows.back().overlap = ovs[v];
      }
    }
  }
  return rows;
}

std::string csv(const std::vector<Row>& rows) {
  std::string out =
      "kernel,size,model,overlap,chunks,devices,status,device,device_name,units,makespan_ms,gather_finish_ms,kernel_ms,"
      "h2d_bytes,h2d_ms,h2d_gbps,pinned_h2d_gbps,h2d_fraction,d2h_bytes,d2h_ms,d2h_gbps,pinned_d2h_gbps,"
      "d2h_fraction\n";
  for (const auto& r : rows) {
    out += fmt::format(
        "{},{},{},{},{},\"{}\",{},{},\"{}\",{},{:.4f},{:.4f},{:.4f},{},{:.4f},{:.3f},{:.3f},{:.3f},{},{:.4f},"
        "{:.3f},{:.3f},{:.3f}\n",
        r.kernel, r.size, r.model, r.overlap, r.chunks, r.devices, r.status, r.device, r.device_name, r.units,
        r.makespan, r.finish, r.kernel_ms, r.h2d_bytes, r.h2d_ms, r.h2d_gbps, r.pinned_h2d,
        fraction(r.h2d_gbps, r.pinned_h2d), r.d2h_bytes, r.d2h_ms, r.d2h_gbps, r.pinned_d2h,
        fraction(r.d2h_gbps, r.pinned_d2h));
  }
  return out;
}

// "81 %" or "" (nothing measured or moved), with a mark under the 80 %
// target for transfers of 1 MB or more (smaller ones are latency, not bandwidth).
std::string pct(double achieved, double measured, std::size_t bytes) {
  const double f = fraction(achieved, measured);
  if (f <= 0) return "";
  return fmt::format("{:.0f} %{}", 100 * f, f < 0.8 && bytes >= 1000000 ? " (<80)" : "");
}

// Per kernel and model: the makespan at each overlap value and its ratio
// to whole blocks (overlap 1, when measured); "" with one overlap value.
std::string overlap_summary(const Options& o, const std::vector<Row>& rows) {
  const auto& ovs = o.overlaps;
  if (ovs.size() < 2) return "";
  std::string md = "\n## Overlap: makespan (ms, median of every pass) by chunks per block\n\n| kernel | size | model |";
  for (const auto v : ovs) md += fmt::format(" {} |", v);
  md += " best vs 1 |\n|---|---|---|";
  for (std::size_t v = 0; v <= ovs.size(); ++v) md += "---|";
  md += "\n";
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::size_t, double>> spans;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  for (const auto& r : rows) {
    const auto key = std::make_tuple(r.kernel, r.size, r.model);
    if (!spans.count(key)) order.push_back(key);
    spans[key][r.overlap] = r.makespan;
  }
  for (const auto& key : order) {
    const auto& m = spans[key];
    md += fmt::format("| {} | {} | {} |", std::get<0>(key), std::get<1>(key), std::get<2>(key));
    double best = 0;
    for (const auto v : ovs) {
      const auto it = m.find(v);
      md += it == m.end() ? " |" : fmt::format(" {:.3f} |", it->second);
      if (it != m.end() && (best == 0 || it->second < best)) best = it->second;
    }
    const auto whole = m.find(1);
    md += whole == m.end() || best <= 0 ? " |\n" : fmt::format(" {:.2f}x |\n", whole->second / best);
  }
  return md;
}

std::string markdown(const Options& o, const std::vector<DeviceBandwidth>& bw, const std::vector<Row>& rows) {
  std::string md = fmt::format(
      "# Split transfers: {}\n\nDevices {}; {} timed rounds after {} warm-up; "
      "`bench_transfers --devices {} --tag {}` (scripts/bench-transfers.sh).\n\n"
      "## Measured bandwidth (GB/s = 10^9 B/s, median of {} transfers of {} MiB, "
      "profiling events)\n\n| device | pageable h2d | pageable d2h | pinned h2d | pinned d2h |\n"
      "|---|---|---|---|---|\n",
      o.tag, o.devices_text, o.repeat, o.warmup, o.devices_text, o.tag, BandwidthOptions{}.repetitions,
      o.bandwidth_bytes >> 20);
  for (const auto& b : bw) {
    md += fmt::format("| {} {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |{}\n", b.device_id, b.device_name,
                      b.pageable_h2d.gbps(b.bytes), b.pageable_d2h.gbps(b.bytes), b.pinned_h2d.gbps(b.bytes),
                      b.pinned_d2h.gbps(b.bytes), b.error.empty() ? "" : " " + b.error);
  }
  md +=
      "\n## Split runs\n\nPer used device: bytes per round, achieved bandwidth (profiling events, median) and its "
      "share of the device's measured pinned bandwidth (target ≥ 80 %, marked (<80) when missed by a transfer of 1 MB "
      "or more); the host's gather + finish once per run.\n\n"
      "| kernel | size | model | overlap | status | makespan ms | gather+finish ms | device | units | chunks | "
      "kernel ms | h2d MB | h2d GB/s | h2d % pinned | d2h MB | d2h GB/s | d2h % pinned |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {:.3f} | {:.3f} | {} | {} | {} | {:.3f} | {:.1f} | {:.2f} | {} | "
        "{:.1f} | {:.2f} | {} |\n",
        r.kernel, r.size, r.model, r.overlap, r.status, r.makespan, r.finish, r.device, r.units, r.chunks, r.kernel_ms,
        r.h2d_bytes / 1e6, r.h2d_gbps, pct(r.h2d_gbps, r.pinned_h2d, r.h2d_bytes), r.d2h_bytes / 1e6, r.d2h_gbps,
        pct(r.d2h_gbps, r.pinned_d2h, r.d2h_bytes));
  }
  return md + overlap_summary(o, rows);
}

int run(int argc, char** argv) {
  Options o;
  po::options_description desc("bench_transfers options");
  desc.add_options()("help", "this help")("devices", po::value(&o.devices_text)->required(),
                                          "devices D1[,D2,...] (P:D, cpu, gpu or a name substring)")(
      "tag", po::value(&o.tag)->default_value("pocl"), "name of the output files")(
      "out-dir", po::value(&o.out_dir)->default_value("docs/results"), "where to write")(
      "sizes",
      po::value(&o.sizes_text)
          ->default_value("matmul=4096,bilinear=2048x2048:4096x4096,sort=4194304,"
                          "trapezoid=16777216"),
      "kernel=size,...")("models", po::value(&o.models_text)->default_value("pe-ratio,measured"),
                         "split models: pe-ratio, measured")("repeat", po::value(&o.repeat)->default_value(5),
                                                             "timed rounds per split run")(
      "warmup", po::value(&o.warmup)->default_value(1), "untimed rounds first")(
      "overlap", po::value(&o.overlap_text)->default_value("1"),
      "chunks per block to compare, e.g. 1,4 "
      "(MultiDeviceRunner::set_overlap)")("passes", po::value(&o.passes)->default_value(1),
                                          "passes over the overlap values, interleaved")(
      "bandwidth-bytes", po::value(&o.bandwidth_bytes)->default_value(o.bandwidth_bytes),
      "bytes per bandwidth transfer");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  po::notify(vm);
  o.overlaps = parse_overlaps(o.overlap_text);  // a bad --overlap fails before any device work
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& sel : split_list(o.devices_text, ',')) devices.push_back(select_device(all, sel));
  std::vector<DeviceBandwidth> bw;
  nlohmann::json bw_json = nlohmann::json::array();
  for (const auto& d : devices) {
    BandwidthOptions bo;  // the defaults (2 warm-up, median of 9) at the benchmark's size
    bo.bytes = o.bandwidth_bytes;
    bw.push_back(measure_bandwidth(d, bo));
    bw_json.push_back(to_json(bw.back()));
  }
  std::vector<Row> rows;
  for (const auto& item : split_list(o.sizes_text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--sizes: '{}' is not kernel=size", item));
    for (auto& r : run_kernel(o, devices, item.substr(0, eq), item.substr(eq + 1), bw)) rows.push_back(r);
  }
  const std::string base = fmt::format("{}/transfers_{}", o.out_dir, o.tag);
  write(base + "_bandwidth.json", bw_json.dump(2) + "\n");
  write(base + ".csv", csv(rows));
  write(base + ".md", markdown(o, bw, rows));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::guarded_main("bench_transfers", [&] { return run(argc, argv); });
}
