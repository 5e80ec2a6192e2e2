#include "wstune/multi_device.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/rules.hpp"
#include "wstune/search_space.hpp"

namespace wstune {

using Clock = std::chrono::steady_clock;

struct MultiDeviceRunner::Impl {
  const KernelSpec* spec = nullptr;
  Problem problem;
  std::vector<Problem> device_problems;  // the problem with each device's parameter values
  std::vector<HostBuffer> inputs;
  std::optional<std::vector<HostBuffer>> reference;
  std::vector<std::unique_ptr<DeviceRunner>> runners;
};

MultiDeviceRunner::MultiDeviceRunner(std::vector<Device> devices, const KernelSpec& spec, Problem problem,
                                     std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  if (devices.empty()) throw UsageError("split: no devices; name two or more with --devices D1,D2");
  impl_->spec = &spec;
  impl_->problem = std::move(problem);
  for (auto& d : devices) impl_->runners.push_back(std::make_unique<DeviceRunner>(std::move(d), spec));
  impl_->device_problems.assign(impl_->runners.size(), impl_->problem);
  impl_->inputs = spec.generate_inputs(impl_->problem, seed);
}

MultiDeviceRunner::~MultiDeviceRunner() = default;

std::size_t MultiDeviceRunner::size() const noexcept { return impl_->runners.size(); }
DeviceRunner& MultiDeviceRunner::runner(std::size_t i) { return *impl_->runners.at(i); }
const KernelSpec& MultiDeviceRunner::spec() const noexcept { return *impl_->spec; }
const Problem& MultiDeviceRunner::problem() const noexcept { return impl_->problem; }

void MultiDeviceRunner::set_params(std::size_t i, const nlohmann::json& params) {
  impl_->device_problems.at(i) = with_params(impl_->problem, params);
}

const Problem& MultiDeviceRunner::problem(std::size_t i) const { return impl_->device_problems.at(i); }

double MultiDeviceRunner::work_items(unsigned dim, std::size_t units) const {
  if (units == 0) return 0;
  return static_cast<double>(impl_->spec->block_global(impl_->problem, Block{dim, 0, units}).count());
}

SplitRunResult MultiDeviceRunner::run(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals,
                                      const TimingOptions& timing) {
  auto& m = *impl_;
  const KernelSpec& k = *m.spec;
  const Problem& p = m.problem;
  const std::size_t n = m.runners.size();
  if (blocks.size() != n || locals.size() != n) {
    throw UsageError(fmt::format("split run: {} devices but {} blocks and {} local sizes; give one each", n,
                                 blocks.size(), locals.size()));
  }
  std::size_t covered = 0;
  const unsigned dim = blocks.front().dim;
  for (const auto& b : blocks) {
    if (b.dim != dim || b.begin != covered) {
      throw UsageError("split run: blocks must be contiguous along one dimension, in device order");
    }
    covered = b.end;
  }
  if (covered != k.split_units(p, dim)) {
    throw UsageError(fmt::format("split run: blocks cover {} of {} split units", covered, k.split_units(p, dim)));
  }

  SplitRunResult res;
  res.slices.resize(n);
  std::vector<std::vector<HostBuffer>> block_in(n);
  std::vector<std::vector<HostBuffer>> last_out(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& s = res.slices[i];
    s.device_id = m.runners[i]->device().info.id();
    s.device_name = m.runners[i]->device().info.name;
    s.block = blocks[i];
    s.local = locals[i];
    if (blocks[i].size() == 0) continue;
    const Problem& pi = m.device_problems[i];
    if (std::string why = m.runners[i]->check_local(pi, blocks[i], locals[i]); !why.empty()) {
      s.status = TrialStatus::constraints;
      s.error = why;
      continue;
    }
    block_in[i] = k.block_inputs(pi, m.inputs, blocks[i]);
  }

  // One round: every used device uploads, runs once and reads back, each
  // from its own thread; returns the round's wall clock.
  auto round = [&](bool timed) {
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      auto& s = res.slices[i];
      if (blocks[i].size() == 0 || s.status != TrialStatus::correct) continue;
      threads.emplace_back([&, i] {
        const auto ti = Clock::now();
        RunResult r;
        try {
          m.runners[i]->upload(m.device_problems[i], blocks[i], block_in[i]);
          r = m.runners[i]->run(m.device_problems[i], blocks[i], locals[i], TimingOptions{0, 1});
        } catch (const std::exception& e) {
          r.status = TrialStatus::runtime;
          r.error = e.what();
        }
        const double wall = ms_since(ti);
        if (!r.ok()) {
          res.slices[i].status = r.status;
          res.slices[i].error = r.error;
          return;
        }
        if (timed) {
          auto& sl = res.slices[i];
          sl.kernel.ms.insert(sl.kernel.ms.end(), r.kernel.ms.begin(), r.kernel.ms.end());
          sl.h2d.ms.insert(sl.h2d.ms.end(), r.h2d.ms.begin(), r.h2d.ms.end());
          sl.d2h.ms.insert(sl.d2h.ms.end(), r.d2h.ms.begin(), r.d2h.ms.end());
          sl.wall.ms.push_back(wall);
        }
        last_out[i] = std::move(r.outputs);
      });
    }
    for (auto& t : threads) t.join();
    return ms_since(t0);
  };
  for (unsigned w = 0; w < timing.warmup; ++w) round(false);
  // At least one timed round; adaptive (TimingOptions::min_timed_ms) when set.
  double timed_sum = 0;
  do {
    res.makespan.ms.push_back(round(true));
    timed_sum += res.makespan.ms.back();
  } while (timing.more(res.makespan.ms.size(), timed_sum) &&
           std::all_of(res.slices.begin(), res.slices.end(),
                       [](const auto& s) { return s.status == TrialStatus::correct; }));

  for (const auto& s : res.slices) {
    if (s.status != TrialStatus::correct) {
      res.status = s.status;
      res.error = fmt::format("{} ({}): {}", s.device_name, s.device_id, s.error);
      return res;
    }
  }
  const auto tf = Clock::now();
  std::vector<HostBuffer> full = k.empty_outputs(p);
  std::vector<Block> used;
  for (std::size_t i = 0; i < n; ++i) {
    if (blocks[i].size() == 0) continue;
    k.place_block(m.device_problems[i], blocks[i], last_out[i], full);
    used.push_back(blocks[i]);
  }
  k.finish(p, used, full);
  res.host_finish_ms = ms_since(tf);
  if (!m.reference) {
    try {
      m.reference = reference_outputs(*m.runners.front(), p, m.inputs);
    } catch (const Error& e) {
      res.status = TrialStatus::correctness;
      res.error = e.what();
      return res;
    }
  }
  res.verdict = k.verify(p, full, *m.reference);
  if (!res.verdict.ok) {
    res.status = TrialStatus::correctness;
    res.error = verification_error(res.verdict);
  }
  return res;
}

DeviceCalibration MultiDeviceRunner::calibrate(std::size_t i, unsigned dim, const LocalSize& local,
                                               const TimingOptions& timing, const CalibrationBudget& budget) {
  auto& m = *impl_;
  DeviceRunner& dr = runner(i);
  const auto& info = dr.device().info;
  DeviceCalibration c{info.id(), info.name, info.fingerprint(), to_string(local), {}, {}, 1.0};
  const std::size_t total = m.spec->split_units(m.device_problems[i], dim);
  std::string last_error;
  // One slice: uploaded, run, read back; its time, or -1 when it cannot run.
  // Under a cap the first timed run decides whether the others are worth it.
  auto measure = [&](std::size_t u) -> double {
    const Block b{dim, 0, u};
    if (std::string why = dr.check_local(m.device_problems[i], b, local); !why.empty()) {
      last_error = why;
      return -1;
    }
    dr.upload(m.device_problems[i], b, m.spec->block_inputs(m.device_problems[i], m.inputs, b));
    TimingOptions first = timing;
    if (budget.capped()) {
      first.repetitions = 1;
      first.min_timed_ms = 0;
    }
    RunResult r = dr.run(m.device_problems[i], b, local, first);
    if (!r.ok()) {
      last_error = r.error;
      return -1;
    }
    const auto point = [&] {
      return CalibrationPoint{u, work_items(dim, u), r.kernel.median(), r.h2d.median(), r.d2h.median()};
    };
    if (budget.capped() && !r.kernel.ms.empty() && point().total_ms() <= budget.max_slice_ms &&
        timing.more(1, r.kernel.ms.front())) {
      TimingOptions rest = timing;
      rest.warmup = 0;
      rest.repetitions = timing.repetitions > 1 ? timing.repetitions - 1 : 0;
      rest.min_timed_ms = std::max(0.0, timing.min_timed_ms - r.kernel.ms.front());
      if (rest.max_repetitions > 0) --rest.max_repetitions;
      const RunResult more = dr.run(m.device_problems[i], b, local, rest);
      if (more.ok()) {
        r.kernel.ms.insert(r.kernel.ms.end(), more.kernel.ms.begin(), more.kernel.ms.end());
        r.d2h.ms.insert(r.d2h.ms.end(), more.d2h.ms.begin(), more.d2h.ms.end());
      }
    }
    c.points.push_back(point());
    return c.points.back().total_ms();
  };
  capped_calibration_sizes(total, split_granularity(*m.spec, m.device_problems[i], dim, local), budget.max_slice_ms, measure);
  if (c.points.empty()) {
    throw Error(fmt::format("calibration of {} on '{}' ({}) ran no slice: {}", m.spec->name(), info.name, info.id(),
                            last_error));
  }
  c.fit = fit_linear(c.points);
  return c;
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
  const std::size_t total = runner.spec().split_units(runner.problem(), dim);
  const auto gran = split_granularities(runner.spec(), runner.problem(), dim, locals);
  std::vector<std::uint64_t> pe;
  for (std::size_t i = 0; i < runner.size(); ++i) pe.push_back(runner.runner(i).device().info.total_pe());
  switch (model) {
    case SplitModel::pe_ratio:
      return align_blocks(pe_ratio_fractions(pe, runner.spec().compute_amount(runner.problem())), total, dim, gran);
    case SplitModel::proportional:
      return align_blocks(proportional_fractions(pe), total, dim, gran);
    case SplitModel::measured:
      if (!cal) throw UsageError("the measured split model needs a calibration; calibrate the devices first");
      return measured_blocks(*cal, total, dim, gran,
                             [&](std::size_t, std::size_t u) { return runner.work_items(dim, u); });
  }
  return {};
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
  std::string out = "percent_first,units_first,units_second,status,makespan_median_ms,makespan_min_ms,"
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

svg::LinePlot sweep_plot(const std::vector<SweepPoint>& sweep, const std::string& title,
                         const std::string& first_name, const std::string& second_name) {
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
