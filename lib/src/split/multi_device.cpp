#include "split/multi_device.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "device/pinned_memory.hpp"
#include "space/rules.hpp"
#include "space/search_space.hpp"
#include "wstune/error.hpp"

namespace wstune {

using Clock = std::chrono::steady_clock;

struct MultiDeviceRunner::Impl {
  const KernelSpec* spec = nullptr;
  Problem problem;
  std::vector<Problem> device_problems;  // the problem with each device's parameter values
  std::vector<HostBuffer> inputs;
  std::optional<std::vector<HostBuffer>> reference;
  // Each device's pinned host memory (nullptr where it could not be had);
  // declared before the runners, which may hold buffers from it.
  std::vector<std::unique_ptr<PinnedMemory>> pinned;
  std::vector<std::unique_ptr<DeviceRunner>> runners;
  std::size_t overlap = 1;  // set_overlap()

  struct Path;
  void prepare(std::size_t i, const Block& b, const LocalSize& local, std::vector<HostBuffer>& full, Path& path);
  std::vector<ReadTarget> chunk_targets(std::size_t i, const Block& sub, const std::vector<OutputBuffer>& outs,
                                        std::vector<HostBuffer>& full, Path& path);
  void prepare_chunks(std::size_t i, const Block& b, const LocalSize& local, const std::vector<HostBuffer>& views,
                      std::vector<HostBuffer>& full, Path& path);
  double round(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals, bool timed,
               std::vector<Path>& paths, SplitRunResult& res);
  void run_rounds(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals, const TimingOptions& timing,
                  std::vector<Path>& paths, SplitRunResult& res);
  void verify(const std::vector<HostBuffer>& full, SplitRunResult& res);
};

MultiDeviceRunner::MultiDeviceRunner(std::vector<Device> devices, const KernelSpec& spec, Problem problem,
                                     std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  if (devices.empty()) throw UsageError("split: no devices; name two or more with --devices D1,D2");
  impl_->spec = &spec;
  impl_->problem = std::move(problem);
  for (auto& d : devices) impl_->runners.push_back(std::make_unique<DeviceRunner>(std::move(d), spec));
  for (const auto& r : impl_->runners) {
    try {
      impl_->pinned.push_back(std::make_unique<PinnedMemory>(r->context(), r->device().device));
    } catch (const Error&) {
      impl_->pinned.push_back(nullptr);  // no pinned memory: the heap (pageable) instead
    }
  }
  impl_->device_problems.assign(impl_->runners.size(), impl_->problem);
  impl_->inputs = spec.generate_inputs(impl_->problem, seed);
}

MultiDeviceRunner::~MultiDeviceRunner() = default;

double SliceResult::h2d_gbps() const noexcept {
  return gbps(h2d_bytes, h2d);
}
double SliceResult::d2h_gbps() const noexcept {
  return gbps(d2h_bytes, d2h);
}

void MultiDeviceRunner::set_overlap(std::size_t chunks) {
  if (chunks == 0) throw UsageError("--overlap 0: give the chunks per block, 1 or more (1: no overlap)");
  impl_->overlap = chunks;
}
std::size_t MultiDeviceRunner::overlap() const noexcept {
  return impl_->overlap;
}

std::size_t MultiDeviceRunner::size() const noexcept {
  return impl_->runners.size();
}
DeviceRunner& MultiDeviceRunner::runner(std::size_t i) {
  return *impl_->runners.at(i);
}
const KernelSpec& MultiDeviceRunner::spec() const noexcept {
  return *impl_->spec;
}
const Problem& MultiDeviceRunner::problem() const noexcept {
  return impl_->problem;
}

void MultiDeviceRunner::set_params(std::size_t i, const nlohmann::json& params) {
  impl_->device_problems.at(i) = with_params(impl_->problem, params);
}

const Problem& MultiDeviceRunner::problem(std::size_t i) const {
  return impl_->device_problems.at(i);
}

double MultiDeviceRunner::work_items(unsigned dim, std::size_t units) const {
  return slice_work_items(*impl_->spec, impl_->problem, dim, units);
}

namespace {

// Throws UsageError unless there is one block and one local size per device
// and the blocks are contiguous along one dimension and cover the problem.
void check_blocks(const KernelSpec& k, const Problem& p, std::size_t n, const std::vector<Block>& blocks,
                  const std::vector<LocalSize>& locals) {
  if (blocks.size() != n || locals.size() != n) {
    throw UsageError(fmt::format("split run: {} devices but {} blocks and {} local sizes; give one each", n,
                                 blocks.size(), locals.size()));
  }
  const unsigned dim = blocks.front().dim;
  if (!blocks_tile(blocks, dim, k.split_units(p, dim))) {
    throw UsageError(
        fmt::format("split run: blocks must be contiguous along one dimension, in device order, and "
                    "cover the {} split units",
                    k.split_units(p, dim)));
  }
}

// `memory`, or the heap when there is no pinned memory (nullptr).
std::pmr::memory_resource* or_heap(std::pmr::memory_resource* memory) {
  return memory ? memory : std::pmr::get_default_resource();
}

// `bufs` copied into `memory` (nullptr: the heap).
std::vector<HostBuffer> copy_into(const std::vector<HostBuffer>& bufs, std::pmr::memory_resource* memory) {
  std::vector<HostBuffer> out;
  for (const auto& b : bufs) {
    out.push_back(HostBuffer::uninitialized(b.type(), b.size(), or_heap(memory)));  // overwritten at once
    if (!b.empty()) std::memcpy(out.back().data(), b.data(), b.bytes());
  }
  return out;
}

// Zeroed buffers of `shapes`' types and sizes in `memory` (nullptr: the heap).
std::vector<HostBuffer> zeroed_like(const std::vector<HostBuffer>& shapes, std::pmr::memory_resource* memory) {
  std::vector<HostBuffer> out;
  for (const auto& b : shapes) out.emplace_back(b.type(), b.size(), or_heap(memory));
  return out;
}

// Read targets point into one run's whole outputs: every runner forgets
// them when the run ends, a throw included.
struct ReadTargetsReset {
  const std::vector<std::unique_ptr<DeviceRunner>>& runners;
  ~ReadTargetsReset() {
    for (const auto& r : runners) r->read_into({});
  }
};

// Whether a block output of `out`'s shape fits `whole` at `place`.
bool fits(const OutputPlace& place, const OutputBuffer& out, const HostBuffer& whole) {
  if (!(whole.type() == out.type)) return false;
  if (place.row == 0) return place.offset + out.read_count <= whole.size();
  if (out.read_count % place.row || place.pitch < place.row) return false;
  const std::size_t rows = out.read_count / place.row;
  return rows == 0 || place.offset + (rows - 1) * place.pitch + place.row <= whole.size();
}

// Read targets for block `b`'s outputs `outs` (KernelSpec::outputs) at
// their places in the whole outputs `full`, or none when one output has no
// place there.
std::vector<ReadTarget> place_targets(const KernelSpec& k, const Problem& p, const Block& b,
                                      const std::vector<OutputBuffer>& outs, std::vector<HostBuffer>& full) {
  std::vector<ReadTarget> targets;
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const auto place = k.output_place(p, b, o);
    if (!place || o >= full.size() || !fits(*place, outs[o], full[o])) return {};
    const std::size_t eb = outs[o].type.bytes();
    targets.push_back(
        ReadTarget{full[o].data() + place->offset * eb, outs[o].read_count * eb, place->row * eb, place->pitch * eb});
  }
  return targets;
}

}  // namespace

// One device's data path for a split run: its inputs in its pinned memory,
// and where each read-back lands: straight in the whole output (`direct`,
// KernelSpec::output_place) or in pinned buffers recycled between rounds.
struct MultiDeviceRunner::Impl::Path {
  std::vector<HostBuffer> inputs;
  bool direct = false;
  std::vector<HostBuffer> outputs;   // the last round's read-back (empty when direct)
  std::vector<OverlapChunk> chunks;  // set_overlap(): the block's sub-blocks (empty: it runs whole)
  // Without `direct`: each chunk's read-back, placed after the last round.
  std::vector<std::vector<HostBuffer>> chunk_outputs;
};

void MultiDeviceRunner::Impl::prepare(std::size_t i, const Block& b, const LocalSize& local,
                                      std::vector<HostBuffer>& full, Path& path) {
  const KernelSpec& k = *spec;
  const Problem& pi = device_problems[i];
  std::pmr::memory_resource* memory = pinned[i].get();
  const std::vector<HostBuffer> views = k.block_inputs(pi, inputs, b);
  path.inputs = copy_into(views, memory);
  const auto outs = k.outputs(pi, b);
  std::vector<ReadTarget> targets = place_targets(k, pi, b, outs, full);
  path.direct = !outs.empty() && targets.size() == outs.size();
  runners[i]->read_into(path.direct ? targets : std::vector<ReadTarget>{});
  if (overlap > 1) prepare_chunks(i, b, local, views, full, path);
  if (!path.direct && path.chunks.empty())
    for (const auto& o : outs) path.outputs.emplace_back(o.type, o.read_count, or_heap(memory));
}

// Where chunk `sub`'s outputs `outs` land: their places in the whole output
// (Path::direct), else fresh buffers in the device's pinned memory kept in
// path.chunk_outputs.
std::vector<ReadTarget> MultiDeviceRunner::Impl::chunk_targets(std::size_t i, const Block& sub,
                                                               const std::vector<OutputBuffer>& outs,
                                                               std::vector<HostBuffer>& full, Path& path) {
  if (path.direct) return place_targets(*spec, device_problems[i], sub, outs, full);
  std::vector<HostBuffer> bufs;
  std::vector<ReadTarget> targets;
  for (const auto& o : outs) {
    bufs.emplace_back(o.type, o.read_count, or_heap(pinned[i].get()));
    targets.push_back(ReadTarget{bufs.back().data(), bufs.back().bytes(), 0, 0});
  }
  path.chunk_outputs.push_back(std::move(bufs));
  return targets;
}

// The block's chunks for an overlapped run, each with its inputs inside the
// device's copies and its outputs' places in the whole output; none (the
// block runs whole) when overlap_blocks() gives none or a chunk cannot be
// placed.
void MultiDeviceRunner::Impl::prepare_chunks(std::size_t i, const Block& b, const LocalSize& local,
                                             const std::vector<HostBuffer>& views, std::vector<HostBuffer>& full,
                                             Path& path) {
  const KernelSpec& k = *spec;
  const Problem& pi = device_problems[i];
  for (const Block& sub : overlap_blocks(k, pi, b, overlap, local)) {
    const auto outs = k.outputs(pi, sub);
    OverlapChunk c{sub, views_within(views, k.block_inputs(pi, inputs, sub), path.inputs),
                   chunk_targets(i, sub, outs, full, path)};
    if (c.inputs.size() != views.size() || outs.empty() || c.targets.size() != outs.size()) {
      path.chunks.clear();
      path.chunk_outputs.clear();
      return;
    }
    path.chunks.push_back(std::move(c));
  }
}

SplitRunResult MultiDeviceRunner::run(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals,
                                      const TimingOptions& timing) {
  auto& m = *impl_;
  const KernelSpec& k = *m.spec;
  const Problem& p = m.problem;
  const std::size_t n = m.runners.size();
  check_blocks(k, p, n, blocks, locals);

  SplitRunResult res;
  res.slices.resize(n);
  // The whole outputs in the first device's pinned memory: the read-backs
  // that land straight in them (contiguous blocks) are DMA copies.
  std::vector<HostBuffer> full = zeroed_like(k.empty_outputs(p), m.pinned.front().get());
  const ReadTargetsReset reset{m.runners};
  std::vector<Impl::Path> paths(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& s = res.slices[i];
    s.device_id = m.runners[i]->device().info.id();
    s.device_name = m.runners[i]->device().info.name;
    s.block = blocks[i];
    s.local = locals[i];
    if (blocks[i].size() == 0) continue;
    if (std::string why = m.runners[i]->check_local(m.device_problems[i], blocks[i], locals[i]); !why.empty()) {
      s.status = TrialStatus::constraints;
      s.error = why;
      continue;
    }
    m.prepare(i, blocks[i], locals[i], full, paths[i]);
    s.chunks = std::max<std::size_t>(1, paths[i].chunks.size());
  }
  m.run_rounds(blocks, locals, timing, paths, res);

  for (const auto& s : res.slices) {
    if (s.status != TrialStatus::correct) {
      res.status = s.status;
      res.error = fmt::format("{} ({}): {}", s.device_name, s.device_id, s.error);
      return res;
    }
  }
  const auto tf = Clock::now();
  std::vector<Block> used;
  for (std::size_t i = 0; i < n; ++i) {
    if (blocks[i].size() == 0) continue;
    const Impl::Path& path = paths[i];
    if (!path.direct && path.chunks.empty()) k.place_block(m.device_problems[i], blocks[i], path.outputs, full);
    for (std::size_t c = 0; c < path.chunk_outputs.size(); ++c)
      k.place_block(m.device_problems[i], path.chunks[c].block, path.chunk_outputs[c], full);
    if (path.chunks.empty()) used.push_back(blocks[i]);
    for (const auto& c : path.chunks) used.push_back(c.block);  // each chunk's outputs are a block's
  }
  k.finish(p, used, full);
  res.host_finish_ms = ms_since(tf);
  m.verify(full, res);
  return res;
}

// One round: every used device uploads, runs once and reads back, each from
// its own thread (its own context and queue, so devices proceed at once);
// returns the round's wall clock. Timed rounds add their samples.
double MultiDeviceRunner::Impl::round(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals,
                                      bool timed, std::vector<Path>& paths, SplitRunResult& res) {
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < runners.size(); ++i) {
    if (blocks[i].size() == 0 || res.slices[i].status != TrialStatus::correct) continue;
    threads.emplace_back([&, i] {
      const auto ti = Clock::now();
      RunResult r;
      try {
        if (!paths[i].chunks.empty()) {
          r = runners[i]->run_overlapped(device_problems[i], paths[i].chunks, locals[i]);
        } else {
          runners[i]->recycle(std::move(paths[i].outputs));
          runners[i]->upload(device_problems[i], blocks[i], paths[i].inputs);
          r = runners[i]->run(device_problems[i], blocks[i], locals[i], TimingOptions{0, 1});
        }
      } catch (const std::exception& e) {
        r.status = TrialStatus::runtime;
        r.error = e.what();
      }
      const double wall = ms_since(ti);
      auto& sl = res.slices[i];
      if (!r.ok()) {
        sl.status = r.status;
        sl.error = r.error;
        return;
      }
      if (timed) {
        sl.kernel.ms.insert(sl.kernel.ms.end(), r.kernel.ms.begin(), r.kernel.ms.end());
        sl.h2d.ms.insert(sl.h2d.ms.end(), r.h2d.ms.begin(), r.h2d.ms.end());
        sl.d2h.ms.insert(sl.d2h.ms.end(), r.d2h.ms.begin(), r.d2h.ms.end());
        sl.wall.ms.push_back(wall);
        sl.h2d_bytes = r.h2d_bytes;
        sl.d2h_bytes = r.d2h_bytes;
      }
      paths[i].outputs = std::move(r.outputs);
    });
  }
  for (auto& t : threads) t.join();
  return ms_since(t0);
}

void MultiDeviceRunner::Impl::run_rounds(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals,
                                         const TimingOptions& timing, std::vector<Path>& paths, SplitRunResult& res) {
  for (unsigned w = 0; w < timing.warmup; ++w) round(blocks, locals, false, paths, res);
  // At least one timed round; adaptive (TimingOptions::min_timed_ms) when set.
  double timed_sum = 0;
  do {
    res.makespan.ms.push_back(round(blocks, locals, true, paths, res));
    timed_sum += res.makespan.ms.back();
  } while (timing.more(res.makespan.ms.size(), timed_sum) &&
           std::all_of(res.slices.begin(), res.slices.end(),
                       [](const auto& s) { return s.status == TrialStatus::correct; }));
}

void MultiDeviceRunner::Impl::verify(const std::vector<HostBuffer>& full, SplitRunResult& res) {
  if (!reference) {
    try {
      reference = reference_outputs(*runners.front(), problem, inputs);
    } catch (const Error& e) {
      res.status = TrialStatus::correctness;
      res.error = e.what();
      return;
    }
  }
  res.verdict = spec->verify(problem, full, *reference);
  if (!res.verdict.ok) {
    res.status = TrialStatus::correctness;
    res.error = verification_error(res.verdict);
  }
}

DeviceCalibration calibrate_alone(DeviceRunner& dr, const Problem& p, const std::vector<HostBuffer>& inputs,
                                  unsigned dim, const LocalSize& local, const TimingOptions& timing,
                                  const CalibrationBudget& budget, std::pmr::memory_resource* memory,
                                  const std::function<double(std::size_t units)>& work_items) {
  const KernelSpec& spec = dr.spec();
  const auto& info = dr.device().info;
  DeviceCalibration c{info.id(), info.name, info.fingerprint(), to_string(local), {}, {}, 1.0};
  const std::size_t total = spec.split_units(p, dim);
  const auto items = [&](std::size_t u) { return work_items ? work_items(u) : slice_work_items(spec, p, dim, u); };
  std::string last_error;
  std::optional<std::pair<Block, double>> last_run;  // the last slice that ran, and its kernel ms
  // One slice: uploaded, run, read back; its time, or -1 when it cannot run.
  // Under a cap the first timed run decides whether the others are worth it.
  auto measure = [&](std::size_t u) -> double {
    const Block b{dim, 0, u};
    if (std::string why = dr.check_local(p, b, local); !why.empty()) {
      last_error = why;
      return -1;
    }
    dr.upload(p, b, copy_into(spec.block_inputs(p, inputs, b), memory));
    TimingOptions first = timing;
    if (budget.capped()) {
      first.repetitions = 1;
      first.min_timed_ms = 0;
    }
    RunResult r = dr.run(p, b, local, first);
    if (!r.ok()) {
      last_error = r.error;
      return -1;
    }
    const auto point = [&] { return CalibrationPoint{u, items(u), r.kernel.median(), r.h2d.median(), r.d2h.median()}; };
    if (budget.capped() && !r.kernel.ms.empty() && point().total_ms() <= budget.max_slice_ms &&
        timing.more(1, r.kernel.ms.front())) {
      TimingOptions rest = timing;
      rest.warmup = 0;
      rest.repetitions = timing.repetitions > 1 ? timing.repetitions - 1 : 0;
      rest.min_timed_ms = std::max(0.0, timing.min_timed_ms - r.kernel.ms.front());
      if (rest.max_repetitions > 0) --rest.max_repetitions;
      const RunResult more = dr.run(p, b, local, rest);
      if (more.ok()) {
        r.kernel.ms.insert(r.kernel.ms.end(), more.kernel.ms.begin(), more.kernel.ms.end());
        r.d2h.ms.insert(r.d2h.ms.end(), more.d2h.ms.begin(), more.d2h.ms.end());
      }
    }
    c.points.push_back(point());
    last_run.emplace(b, r.kernel.median());
    return c.points.back().total_ms();
  };
  capped_calibration_sizes(total, split_granularity(spec, p, dim, local), budget.max_slice_ms, measure);
  if (c.points.empty()) {
    throw Error(
        fmt::format("calibration of {} on '{}' ({}) ran no slice: {}", spec.name(), info.name, info.id(), last_error));
  }
  c.fit = fit_linear(c.points);
  if (last_run) measure_power(dr, p, last_run->first, local, last_run->second, c);
  return c;
}

DeviceCalibration MultiDeviceRunner::calibrate(std::size_t i, unsigned dim, const LocalSize& local,
                                               const TimingOptions& timing, const CalibrationBudget& budget) {
  auto& m = *impl_;
  return calibrate_alone(runner(i), m.device_problems.at(i), m.inputs, dim, local, timing, budget, m.pinned[i].get(),
                         [&](std::size_t u) { return work_items(dim, u); });
}

Calibration MultiDeviceRunner::calibrate_all(unsigned dim, const std::vector<LocalSize>& locals,
                                             const TimingOptions& timing, const CalibrationBudget& budget) {
  if (locals.size() != size()) {
    throw UsageError(fmt::format("calibration: {} devices but {} local sizes", size(), locals.size()));
  }
  Calibration cal{std::string(spec().name()), problem().text, dim, {}};
  for (std::size_t i = 0; i < size(); ++i) cal.devices.push_back(calibrate(i, dim, locals[i], timing, budget));
  return cal;
}

std::vector<LocalSize> resolve_locals(MultiDeviceRunner& runner, const std::vector<Block>& blocks,
                                      const std::vector<std::optional<LocalSize>>& fixed, const LocalRule& rule) {
  if (fixed.size() != runner.size() || blocks.size() != runner.size()) {
    throw UsageError(fmt::format("local sizes: {} devices but {} local sizes and {} blocks", runner.size(),
                                 fixed.size(), blocks.size()));
  }
  std::vector<LocalSize> out;
  for (std::size_t i = 0; i < fixed.size(); ++i) {
    if (fixed[i]) {
      out.push_back(*fixed[i]);
    } else if (!rule) {
      throw UsageError("--local rule: no local-size rule is available in this build; give X,Y or null");
    } else {
      out.push_back(blocks[i].size() ? rule(runner.runner(i), runner.problem(), blocks[i]) : LocalSize{});
    }
  }
  return out;
}

std::vector<Block> model_blocks(SplitModel model, MultiDeviceRunner& runner, unsigned dim,
                                const std::vector<LocalSize>& locals, const Calibration* cal) {
  std::vector<std::uint64_t> pe;
  for (std::size_t i = 0; i < runner.size(); ++i) pe.push_back(runner.runner(i).device().info.total_pe());
  return model_blocks(model, runner.spec(), runner.problem(), dim, pe, locals, cal);
}

std::vector<Block> refine_measured(MultiDeviceRunner& runner, Calibration& cal, const std::vector<LocalSize>& locals,
                                   const TimingOptions& timing, unsigned rounds) {
  const unsigned dim = cal.dim;
  std::vector<Block> blocks = model_blocks(SplitModel::measured, runner, dim, locals, &cal);
  for (unsigned it = 0; it < rounds; ++it) {
    const SplitRunResult r = runner.run(blocks, locals, timing);
    if (!r.ok()) break;
    std::size_t used = 0;
    for (const auto& b : blocks) used += b.size() > 0;
    if (used < 2) break;  // one device alone: nothing runs concurrently to observe
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].size() == 0) continue;
      const auto& s = r.slices[i];
      observe_concurrent(cal.devices[i], runner.work_items(dim, blocks[i].size()),
                         s.kernel.median() + s.h2d.median() + s.d2h.median());
    }
    auto next = model_blocks(SplitModel::measured, runner, dim, locals, &cal);
    if (next == blocks) break;
    blocks = std::move(next);
  }
  return blocks;
}

std::vector<SweepPoint> sweep_two(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                  const TimingOptions& timing, double step, double fine) {
  if (runner.size() != 2) throw UsageError(fmt::format("--sweep needs exactly two devices, got {}", runner.size()));
  if (!(step > 0 && step <= 50)) throw UsageError(fmt::format("--sweep {}: give a step in (0, 50] percent", step));
  const std::size_t total = runner.spec().split_units(runner.problem(), dim);
  const auto gran = split_granularities(runner.spec(), runner.problem(), dim, locals);
  std::map<double, SweepPoint> points;  // by percent
  std::vector<std::vector<Block>> seen;
  auto measure = [&](double pct) {
    pct = std::clamp(std::round(pct * 1000) / 1000, 0.0, 100.0);
    if (points.count(pct)) return;
    std::vector<Block> blocks;
    try {
      blocks = align_blocks({pct / 100, 1 - pct / 100}, total, dim, gran);
    } catch (const UsageError&) {
      return;  // this ratio cannot be aligned
    }
    if (std::find(seen.begin(), seen.end(), blocks) != seen.end()) return;
    seen.push_back(blocks);
    SweepPoint sp{pct, blocks, runner.run(blocks, locals, timing)};
    points.emplace(pct, std::move(sp));
  };
  const int coarse = static_cast<int>(std::ceil(100 / step));
  for (int i = 0; i <= coarse; ++i) measure(std::min(100.0, i * step));
  if (fine > 0) {
    std::vector<SweepPoint> tmp;
    for (auto& [k, v] : points) tmp.push_back(v);
    if (const SweepPoint* best = best_point(tmp)) {
      const double c = best->percent_first;
      for (double q = c - step + fine; q < c + step - 1e-9; q += fine) measure(q);
    }
  }
  std::vector<SweepPoint> out;
  for (auto& [k, v] : points) out.push_back(std::move(v));
  return out;
}

const SweepPoint* best_point(const std::vector<SweepPoint>& sweep) {
  const SweepPoint* best = nullptr;
  for (const auto& p : sweep) {
    if (!p.result.ok()) continue;
    if (!best || p.result.makespan.median() < best->result.makespan.median()) best = &p;
  }
  return best;
}

std::string sweep_csv(const std::vector<SweepPoint>& sweep) {
  std::string out =
      "percent_first,units_first,units_second,status,makespan_median_ms,makespan_min_ms,"
      "kernel_first_ms,kernel_second_ms\n";
  auto kernel = [](const SliceResult& s) {
    return s.kernel.size() ? fmt::format("{:.4f}", s.kernel.median()) : std::string{};
  };
  for (const auto& p : sweep) {
    const auto& r = p.result;
    out += fmt::format("{:g},{},{},{},{:.4f},{:.4f},{},{}\n", p.percent_first, p.blocks.at(0).size(),
                       p.blocks.at(1).size(), to_string(r.status), r.makespan.median(), r.makespan.min(),
                       kernel(r.slices.at(0)), kernel(r.slices.at(1)));
  }
  return out;
}

svg::LinePlot sweep_plot(const std::vector<SweepPoint>& sweep, const std::string& title, const std::string& first_name,
                         const std::string& second_name) {
  svg::LinePlot plot;
  plot.title = title;
  plot.x_label = "share of " + first_name + " (%)";
  plot.y_label = "time (ms)";
  svg::Series makespan{"makespan (wall clock)", {}, {}};
  svg::Series k0{"kernel on " + first_name, {}, {}};
  svg::Series k1{"kernel on " + second_name, {}, {}};
  for (const auto& p : sweep) {
    if (!p.result.ok()) continue;
    makespan.x.push_back(p.percent_first);
    makespan.y.push_back(p.result.makespan.median());
    k0.x.push_back(p.percent_first);
    k0.y.push_back(p.result.slices.at(0).kernel.median());
    k1.x.push_back(p.percent_first);
    k1.y.push_back(p.result.slices.at(1).kernel.median());
  }
  plot.series = {makespan, k0, k1};
  if (const SweepPoint* best = best_point(sweep)) plot.mark_x = best->percent_first;
  return plot;
}

LocalSize paper_local_rule(const DeviceRunner& runner, const Problem& p, const Block& b) {
  const Extent global = runner.spec().block_global(p, b);
  const auto& info = runner.device().info;
  SpaceLimits limits;
  limits.max_work_group_size = info.max_work_group_size;
  limits.kernel_work_group_size = runner.kernel_work_group_size();
  limits.max_work_item_sizes = info.max_work_item_sizes;
  limits.local_mem_bytes = info.local_mem_bytes;
  limits.kernel_local_mem_bytes = runner.kernel_local_mem_bytes();
  return paper_rule(global, enumerate_local_sizes(global, limits), runner.spec().priority(), info.pe_per_cu);
}

}  // namespace wstune
