#include "split/split.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "kernel/kernel.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace wstune {

std::string_view to_string(SplitModel m) noexcept {
  switch (m) {
    case SplitModel::pe_ratio:
      return "pe-ratio";
    case SplitModel::proportional:
      return "proportional";
    case SplitModel::measured:
      return "measured";
    case SplitModel::even:
      return "even";
  }
  return "?";
}

SplitModel parse_split_model(std::string_view text) {
  for (auto m : {SplitModel::pe_ratio, SplitModel::proportional, SplitModel::measured, SplitModel::even}) {
    if (text == to_string(m)) return m;
  }
  throw UsageError(fmt::format("--model '{}' is unknown: use pe-ratio, proportional, even or measured", text));
}

std::string_view to_string(SplitDirection d) noexcept {
  switch (d) {
    case SplitDirection::x:
      return "x";
    case SplitDirection::y:
      return "y";
    case SplitDirection::auto_:
      return "auto";
  }
  return "?";
}

SplitDirection parse_split_direction(std::string_view text, std::string_view what) {
  if (text == "x") return SplitDirection::x;
  if (text == "y") return SplitDirection::y;
  if (text == "auto") return SplitDirection::auto_;
  throw UsageError(fmt::format("{} '{}' is unknown: use x, y or auto", what, text));
}

unsigned split_dimension(unsigned dims, Priority priority, SplitDirection direction) {
  switch (direction) {
    case SplitDirection::x:
      return 0;
    case SplitDirection::y:
      if (dims < 2) throw UsageError("--direction y needs a 2-D kernel: 1-D kernels split along x (or use auto)");
      return 1;
    case SplitDirection::auto_:
      if (dims < 2) return 0;
      // Keep the data-sharing direction whole inside each device's block.
      return priority == Priority::y ? 0 : 1;
  }
  return 0;
}

std::optional<unsigned> described_split_dim(const KernelSpec& spec) {
  const TuningFile* file = tuning_file_of(spec);
  if (!file || !file->split.is_object()) return std::nullopt;
  const std::string d = file->split.value("Dimension", "X");
  return d == "Y" ? 1 : d == "Z" ? 2 : 0;
}

unsigned split_dimension(const KernelSpec& spec, SplitDirection direction) {
  const unsigned dim = split_dimension(spec.dims(), spec.priority(), direction);
  return described_split_dim(spec).value_or(dim);
}

std::string_view to_string(ComputeClass c) noexcept {
  switch (c) {
    case ComputeClass::small:
      return "small";
    case ComputeClass::medium:
      return "medium";
    case ComputeClass::large:
      return "large";
  }
  return "?";
}

ComputeClass compute_class(double c) noexcept {
  if (c <= 4e8) return ComputeClass::small;
  if (c < 8e11) return ComputeClass::medium;
  return ComputeClass::large;
}

double correction_k(ComputeClass c) noexcept {
  switch (c) {
    case ComputeClass::small:
      return 1.25;
    case ComputeClass::medium:
      return 0.75;
    case ComputeClass::large:
      return 0.25;
  }
  return 1.0;
}

namespace {
void require_pe(const std::vector<std::uint64_t>& pe) {
  if (pe.empty()) throw UsageError("split: no devices given; name at least one with --devices");
  for (std::size_t i = 0; i < pe.size(); ++i) {
    if (pe[i] == 0) {
      throw UsageError(
          fmt::format("split: device {} reports 0 processing elements; set its PEs per CU "
                      "with WSTUNE_PE_PER_CU or the pe.conf override file",
                      i));
    }
  }
}
}  // namespace

double pe_ratio_small_fraction(std::uint64_t pe_small, std::uint64_t pe_large, ComputeClass c) {
  require_pe({pe_small, pe_large});
  if (pe_small > pe_large) {
    throw UsageError(
        fmt::format("pe_ratio_small_fraction: pe_small {} > pe_large {}; pass the smaller first", pe_small, pe_large));
  }
  // Closer than 2:3 ⇔ PE_S / (PE_S + PE_L) > 2/5 ⇔ 3·PE_S > 2·PE_L (integers, no rounding).
  if (3 * pe_small > 2 * pe_large) return 0.5;
  const double ratio_s = static_cast<double>(pe_small) / static_cast<double>(pe_small + pe_large);
  return ratio_s * correction_k(c);  // eq. (3), before the floor
}

std::vector<double> pe_ratio_fractions(const std::vector<std::uint64_t>& pe, double compute_amount) {
  require_pe(pe);
  const ComputeClass cls = compute_class(compute_amount);
  std::vector<std::size_t> order(pe.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pe[a] < pe[b]; });
  // Continued ratio w0 : w1 : … over the devices in ascending PE order.
  std::vector<double> w(pe.size(), 1.0);
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    const double s = pe_ratio_small_fraction(pe[order[i]], pe[order[i + 1]], cls);
    w[i + 1] = w[i] * (1.0 - s) / s;
  }
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<double> out(pe.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[order[i]] = w[i] / sum;
  return out;
}

std::vector<double> proportional_fractions(const std::vector<std::uint64_t>& pe) {
  require_pe(pe);
  const double sum =
      std::accumulate(pe.begin(), pe.end(), 0.0, [](double s, std::uint64_t v) { return s + static_cast<double>(v); });
  std::vector<double> out;
  for (auto v : pe) out.push_back(static_cast<double>(v) / sum);
  return out;
}

std::vector<Block> align_blocks(const std::vector<double>& fractions, std::size_t total, unsigned dim,
                                const std::vector<std::size_t>& gran) {
  if (fractions.size() != gran.size() || fractions.empty()) {
    throw UsageError(
        fmt::format("split: {} fractions but {} granularities; give one per device", fractions.size(), gran.size()));
  }
  const std::size_t n = fractions.size();
  std::vector<std::size_t> units(n, 0);
  std::vector<double> target(n);
  std::size_t used = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (gran[i] == 0) throw UsageError(fmt::format("split: device {} has granularity 0", i));
    const double f = std::clamp(fractions[i], 0.0, 1.0);
    target[i] = f * static_cast<double>(total);
    // floor(fraction × total) (eq. 3), to a multiple of the granularity; the
    // tiny slack keeps 0.1 × 1000 at 100 despite binary rounding.
    const auto floor_units = static_cast<std::size_t>(std::floor(target[i] * (1 + 1e-12)));
    units[i] = std::min(floor_units, total) / gran[i] * gran[i];
    used += units[i];
  }
  while (used > total) {  // only from rounding slack; take back from the largest
    const auto i = static_cast<std::size_t>(std::max_element(units.begin(), units.end()) - units.begin());
    const std::size_t take = std::min(units[i], gran[i]);
    units[i] -= take;
    used -= take;
  }
  std::size_t rem = total - used;
  while (rem > 0) {
    std::optional<std::size_t> best;
    for (int pass = 0; pass < 2 && !best; ++pass) {
      for (std::size_t i = 0; i < n; ++i) {
        if (gran[i] > rem || (pass == 0 && fractions[i] <= 0)) continue;
        // The rest goes to the device with the largest share (eq. 4: global_L =
        // total − global_S), so the smaller devices keep floor(share × total).
        if (!best || fractions[i] > fractions[*best]) best = i;
      }
    }
    if (!best) {
      throw UsageError(fmt::format(
          "split: {} split unit(s) along {} are left over and no device's slice granularity (local size × "
          "units per work-item) fits them; give one device a local size dividing the problem, or --local null",
          rem, dim == 0 ? "x" : "y"));
    }
    units[*best] += gran[*best];
    rem -= gran[*best];
  }
  return shares_blocks(dim, units);
}

std::size_t split_granularity(const KernelSpec& spec, unsigned dim, const LocalSize& local) {
  const std::size_t l = local && !spec.guards_bounds() ? (*local)[dim] : 1;
  return std::max<std::size_t>(1, l) * spec.units_per_work_item();
}

std::vector<Block> chunk_blocks(const Block& b, std::size_t count, std::size_t granularity) {
  if (count == 0 || granularity == 0)
    throw UsageError(fmt::format("chunks: {} chunks of granularity {}; give at least 1 of each", count, granularity));
  const std::size_t granules = b.size() / granularity;
  const std::size_t n = std::max<std::size_t>(1, std::min(count, granules));
  std::vector<Block> chunks;
  std::size_t at = b.begin;
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t g = granules / n + (s < granules % n ? 1 : 0);
    const std::size_t end = s + 1 == n ? b.end : at + g * granularity;
    chunks.push_back(Block{b.dim, at, end});
    at = end;
  }
  return chunks;
}

bool blocks_tile(const std::vector<Block>& blocks, unsigned dim, std::size_t total_units) {
  if (blocks.empty()) return false;
  std::size_t at = 0;
  for (const Block& b : blocks) {
    if (b.dim != dim || b.begin != at || b.end < b.begin) return false;
    at = b.end;
  }
  return at == total_units;
}

std::vector<Block> overlap_blocks(const KernelSpec& spec, const Problem& p, const Block& b, unsigned overlap,
                                  const LocalSize& local) {
  if (overlap < 2 || spec.merges_blocks() || !spec.runs_slices()) return {};
  auto blocks = chunk_blocks(b, overlap, split_granularity(spec, p, b.dim, local));
  if (blocks.size() < 2) blocks.clear();
  return blocks;
}

std::vector<HostBuffer> views_within(const std::vector<HostBuffer>& views, const std::vector<HostBuffer>& sub,
                                     const std::vector<HostBuffer>& copies) {
  if (sub.size() != views.size() || copies.size() != views.size()) return {};
  std::vector<HostBuffer> out;
  for (std::size_t j = 0; j < sub.size(); ++j) {
    if (sub[j].empty()) {
      out.push_back(copies[j].view(0, 0));
      continue;
    }
    const auto* base = views[j].data();
    const auto* at = sub[j].data();
    const std::size_t eb = sub[j].type().bytes();
    if (!(sub[j].type() == views[j].type()) || at < base || at + sub[j].bytes() > base + views[j].bytes() ||
        (at - base) % eb)
      return {};
    out.push_back(copies[j].view(static_cast<std::size_t>(at - base) / eb, sub[j].size()));
  }
  return out;
}

namespace {

// The granularity of a null local size's slices along `dim` (split_granularity()
// in split.hpp says why): slice_multiple × the largest power of two of
// work-items up to the NDRange's cap and `cap` that divides the whole range and
// leaves at least kDriverMinGranules granules.
std::size_t driver_granularity(const KernelSpec& spec, const Problem& p, unsigned dim, std::size_t cap) {
  const std::size_t multiple = std::max<std::size_t>(1, spec.slice_multiple(p, dim));
  const std::size_t total = spec.split_units(p, dim);
  std::size_t a = std::min(spec.dims() == 1 ? kDriverAlignment1d : kDriverAlignmentNd, cap);
  while (a > 1 && (total % (a * multiple) != 0 || total / (a * multiple) < kDriverMinGranules)) a /= 2;
  return a * multiple;
}

}  // namespace

std::vector<std::size_t> split_granularities(const KernelSpec& spec, const Problem& p, unsigned dim,
                                             const std::vector<LocalSize>& locals) {
  // The largest power of two dividing every set local size that sets a step.
  std::size_t cap = kDriverAlignment1d;
  for (const auto& l : locals) {
    const std::size_t e = l && !spec.guards_bounds() ? std::max<std::size_t>(1, (*l)[dim]) : 0;
    if (e) cap = std::min(cap, e & (~e + 1));
  }
  std::vector<std::size_t> g;
  for (const auto& l : locals)
    g.push_back(l ? split_granularity(spec, p, dim, l) : driver_granularity(spec, p, dim, cap));
  return g;
}

// ---- splits as slices per device ------------------------------------------------

bool SplitLattice::contains(const Shares& units) const {
  if (units.size() != size()) return false;
  std::size_t sum = 0;
  for (std::size_t i = 0; i < size(); ++i) {
    if (units[i] % std::max<std::size_t>(1, granularity[i]) != 0) return false;
    sum += units[i];
  }
  return sum == total_units;
}

namespace {
// The split with the others' slices floored to their granularities and the
// pair (i, j) taking the rest, i as near its target as the pair's
// granularities allow (RefineDomain's arithmetic, inline).
std::optional<Shares> snap_pair(const SplitLattice& l, const std::vector<double>& target, std::size_t i,
                                std::size_t j) {
  Shares u(l.size(), 0);
  std::size_t others = 0;
  for (std::size_t m = 0; m < l.size(); ++m) {
    if (m == i || m == j) continue;
    const std::size_t g = std::max<std::size_t>(1, l.granularity[m]);
    u[m] = std::min(static_cast<std::size_t>(std::max(0.0, target[m])), l.total_units) / g * g;
    others += u[m];
  }
  if (others > l.total_units) return std::nullopt;
  const std::size_t rest = l.total_units - others;
  const std::size_t gi = std::max<std::size_t>(1, l.granularity[i]), gj = std::max<std::size_t>(1, l.granularity[j]);
  std::optional<std::size_t> best;
  // The settable slices of i repeat every lcm(gi, gj): look within one period of the target.
  const std::size_t period = std::lcm(gi, gj);
  const std::size_t near = std::min(static_cast<std::size_t>(std::max(0.0, target[i])), rest) / gi * gi;
  const std::size_t from = near > period ? (near - period) / gi * gi : 0;
  for (std::size_t ui = from; ui <= rest && ui <= near + period; ui += gi) {
    if ((rest - ui) % gj != 0) continue;
    if (!best || std::abs(static_cast<double>(ui) - target[i]) < std::abs(static_cast<double>(*best) - target[i])) {
      best = ui;
    }
  }
  if (!best) return std::nullopt;
  u[i] = *best;
  u[j] = rest - *best;
  return u;
}

// The nearest of the pair splits (snap_pair) over every pair of devices.
std::optional<Shares> snap_by_pairs(const SplitLattice& l, const std::vector<double>& target) {
  std::optional<Shares> best;
  double best_dist = 0;
  for (std::size_t i = 0; i < l.size(); ++i) {
    for (std::size_t j = i + 1; j < l.size(); ++j) {
      const auto u = snap_pair(l, target, i, j);
      if (!u) continue;
      double dist = 0;
      for (std::size_t m = 0; m < l.size(); ++m) dist += std::abs(static_cast<double>((*u)[m]) - target[m]);
      if (!best || dist < best_dist) {
        best = u;
        best_dist = dist;
      }
    }
  }
  return best;
}
}  // namespace

Shares SplitLattice::snap(const Shares& units) const {
  if (units.size() != size() || units.empty()) {
    throw UsageError(fmt::format("split: a split of {} devices given for {} devices; give one slice per device",
                                 units.size(), size()));
  }
  const double sum = std::accumulate(units.begin(), units.end(), 0.0,
                                     [](double s, std::size_t u) { return s + static_cast<double>(u); });
  std::vector<double> fractions, target;
  for (auto u : units) {
    fractions.push_back(sum > 0 ? static_cast<double>(u) / sum : 1.0 / static_cast<double>(size()));
    target.push_back(fractions.back() * static_cast<double>(total_units));
  }
  try {
    return block_units(align_blocks(fractions, total_units, 0, granularity));
  } catch (const UsageError&) {
    // The remainder fits no single device; a pair of devices may still take it.
    if (auto u = snap_by_pairs(*this, target)) return *u;
    throw;
  }
}

Shares SplitLattice::alone(std::size_t i) const {
  Shares u(size(), 0);
  u.at(i) = total_units;
  return u;
}

std::vector<std::size_t> device_set(const Shares& units) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (units[i] > 0) out.push_back(i);
  }
  return out;
}

std::vector<Block> shares_blocks(unsigned dim, const Shares& units) {
  std::vector<Block> blocks;
  std::size_t begin = 0;
  for (auto u : units) {
    blocks.push_back(Block{dim, begin, begin + u});
    begin += u;
  }
  return blocks;
}

std::string percent_text(const Shares& units, std::size_t total) {
  std::string out;
  for (auto u : units) {
    const double pct = total ? 100.0 * static_cast<double>(u) / static_cast<double>(total) : 0.0;
    out += fmt::format("{}{:.1f}", out.empty() ? "" : "/", pct);
  }
  return out;
}

Shares block_units(const std::vector<Block>& blocks) {
  Shares u;
  for (const auto& b : blocks) u.push_back(b.size());
  return u;
}

std::size_t split_granularity(const KernelSpec& spec, const Problem& p, unsigned dim, const LocalSize& local) {
  if (!local) return driver_granularity(spec, p, dim, kDriverAlignment1d);
  const std::size_t l = spec.guards_bounds() ? 1 : (*local)[dim];
  return std::max<std::size_t>(1, l) * std::max<std::size_t>(1, spec.slice_multiple(p, dim));
}

// ---- measured model ---------------------------------------------------------------

LinearFit fit_linear(const std::vector<CalibrationPoint>& pts) {
  if (pts.empty()) throw UsageError("fit_linear: no calibration points; calibrate the device first");
  double sw = 0, st = 0, sww = 0, swt = 0;
  const auto n = static_cast<double>(pts.size());
  for (const auto& p : pts) {
    sw += p.work_items;
    st += p.total_ms();
    sww += p.work_items * p.work_items;
    swt += p.work_items * p.total_ms();
  }
  const double denom = n * sww - sw * sw;
  LinearFit f;
  if (denom > 1e-12 * n * sww) {
    f.b_ms_per_item = (n * swt - sw * st) / denom;
    f.a_ms = (st - f.b_ms_per_item * sw) / n;
  } else {  // one distinct slice size: through the origin
    f.b_ms_per_item = sww > 0 ? swt / sww : 0;
    f.a_ms = 0;
  }
  if (f.b_ms_per_item < 0) {  // time falling with size is noise: a constant
    f = LinearFit{st / n, 0};
  } else if (f.a_ms < 0) {  // a negative fixed cost: through the origin
    f = LinearFit{0, sww > 0 ? swt / sww : 0};
  }
  return f;
}

double DeviceCalibration::predict_ms(double w) const {
  return w <= 0 ? 0 : points_ms(w) * concurrency_scale + fixed_ms;
}

double DeviceCalibration::points_ms(double w) const {
  if (w <= 0) return 0;
  // Mean time per distinct work-item count, made non-decreasing.
  std::map<double, std::pair<double, int>> acc;
  for (const auto& p : points) {
    auto& [sum, count] = acc[p.work_items];
    sum += p.total_ms();
    ++count;
  }
  std::vector<std::pair<double, double>> curve;
  for (const auto& [x, sc] : acc) {
    const double t = sc.first / sc.second;
    curve.emplace_back(x, curve.empty() ? t : std::max(t, curve.back().second));
  }
  double t = 0;
  if (curve.empty()) {
    t = fit(w);
  } else if (w <= curve.front().first) {
    const double t0 = std::min(std::max(fit.a_ms, 0.0), curve.front().second);
    t = t0 + (curve.front().second - t0) * w / curve.front().first;
  } else if (w >= curve.back().first) {
    double slope = fit.b_ms_per_item;
    if (slope <= 0 && curve.size() > 1) {
      const auto& [x0, y0] = curve[curve.size() - 2];
      slope = (curve.back().second - y0) / (curve.back().first - x0);
    }
    if (slope <= 0) slope = curve.back().second / curve.back().first;
    t = curve.back().second + slope * (w - curve.back().first);
  } else {
    auto hi = std::lower_bound(curve.begin(), curve.end(), w, [](const auto& pt, double v) { return pt.first < v; });
    auto lo = hi - 1;
    t = lo->second + (hi->second - lo->second) * (w - lo->first) / (hi->first - lo->first);
  }
  return t;
}

DeviceCalibration for_kernel_runs(DeviceCalibration d, unsigned runs) {
  const double k = std::max(1u, runs);
  for (auto& p : d.points) p.kernel_ms *= k;
  if (!d.points.empty()) d.fit = fit_linear(d.points);
  return d;
}

Calibration for_kernel_runs(Calibration cal, unsigned runs) {
  for (auto& d : cal.devices) d = for_kernel_runs(std::move(d), runs);
  return cal;
}

void observe_concurrent(DeviceCalibration& d, double work_items, double observed_ms) {
  if (work_items <= 0 || observed_ms <= 0) return;
  const double predicted = d.points_ms(work_items);
  if (predicted > 0 && observed_ms > d.fixed_ms) d.concurrency_scale = (observed_ms - d.fixed_ms) / predicted;
}

void observe_job(DeviceCalibration& d, double work_items, double observed_ms) {
  if (work_items <= 0 || observed_ms <= 0) return;
  d.fixed_ms = std::max(0.0, observed_ms - d.points_ms(work_items) * d.concurrency_scale);
}

nlohmann::json to_json(const CalibrationPoint& p) {
  return {{"units", p.units},
          {"work_items", p.work_items},
          {"kernel_ms", p.kernel_ms},
          {"h2d_ms", p.h2d_ms},
          {"d2h_ms", p.d2h_ms}};
}

CalibrationPoint calibration_point_from_json(const nlohmann::json& j) {
  return CalibrationPoint{j.at("units").get<std::size_t>(), j.at("work_items").get<double>(),
                          j.at("kernel_ms").get<double>(), j.at("h2d_ms").get<double>(), j.at("d2h_ms").get<double>()};
}

nlohmann::json to_json(const DeviceCalibration& d) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : d.points) pts.push_back(to_json(p));
  nlohmann::json j{{"device_id", d.device_id},
                   {"device_name", d.device_name},
                   {"fingerprint", d.fingerprint},
                   {"local", d.local},
                   {"points", pts},
                   {"fit", {{"a_ms", d.fit.a_ms}, {"b_ms_per_item", d.fit.b_ms_per_item}}},
                   {"concurrency_scale", d.concurrency_scale},
                   {"fixed_ms", d.fixed_ms}};
  if (d.active_w) j["active_w"] = *d.active_w;  // only with a sensor: calibrations without one read as before
  if (d.idle_w) j["idle_w"] = *d.idle_w;
  return j;
}

DeviceCalibration device_calibration_from_json(const nlohmann::json& j) {
  DeviceCalibration d;
  d.device_id = j.at("device_id").get<std::string>();
  d.device_name = j.at("device_name").get<std::string>();
  d.fingerprint = j.at("fingerprint").get<std::string>();
  d.local = j.at("local").get<std::string>();
  for (const auto& p : j.at("points")) d.points.push_back(calibration_point_from_json(p));
  d.fit = LinearFit{j.at("fit").at("a_ms").get<double>(), j.at("fit").at("b_ms_per_item").get<double>()};
  d.concurrency_scale = j.value("concurrency_scale", 1.0);
  d.fixed_ms = j.value("fixed_ms", 0.0);
  if (j.contains("active_w")) d.active_w = j.at("active_w").get<double>();
  if (j.contains("idle_w")) d.idle_w = j.at("idle_w").get<double>();
  return d;
}

nlohmann::json to_json(const Calibration& c) {
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : c.devices) devs.push_back(to_json(d));
  return {{"kernel", c.kernel}, {"size", c.size}, {"dim", c.dim}, {"devices", devs}};
}

Calibration calibration_from_json(const nlohmann::json& j) {
  Calibration c;
  c.kernel = j.at("kernel").get<std::string>();
  c.size = j.at("size").get<std::string>();
  c.dim = j.at("dim").get<unsigned>();
  for (const auto& d : j.at("devices")) c.devices.push_back(device_calibration_from_json(d));
  return c;
}

namespace {
// Positive multiples of g at the fractions of total, deduplicated, ascending.
std::vector<std::size_t> sizes_at(std::size_t total, std::size_t g, std::initializer_list<double> fractions) {
  std::vector<std::size_t> out;
  if (total == 0 || g == 0) return out;
  for (double f : fractions) {
    std::size_t u = static_cast<std::size_t>(f * static_cast<double>(total)) / g * g;
    if (u == 0) u = std::min(g, total / g * g);
    if (u > 0 && (out.empty() || out.back() != u)) out.push_back(u);
  }
  return out;
}
}  // namespace

std::vector<std::size_t> calibration_sizes(std::size_t total, std::size_t g) {
  return sizes_at(total, g, {0.125, 0.25, 0.5, 0.75, 1.0});
}

std::vector<std::size_t> calibration_ladder(std::size_t total, std::size_t g) {
  return sizes_at(total, g, {1.0 / 64, 1.0 / 32, 1.0 / 16, 0.125, 0.25, 0.5, 0.75, 1.0});
}

std::vector<std::size_t> capped_calibration_sizes(std::size_t total, std::size_t g, double cap,
                                                  const std::function<double(std::size_t)>& measure) {
  const bool capped = cap > 0;
  std::vector<std::size_t> done;
  double last_ms = 0;
  for (std::size_t u : capped ? calibration_ladder(total, g) : calibration_sizes(total, g)) {
    if (capped && done.size() >= 2 && last_ms * static_cast<double>(u) / static_cast<double>(done.back()) > cap) break;
    const double t = measure(u);
    if (!(t >= 0)) continue;  // could not run (negative or NaN)
    done.push_back(u);
    last_ms = t;
    if (capped && done.size() >= 2 && t > cap) break;
  }
  return done;
}

double predicted_makespan_ms(const Calibration& cal, const std::vector<Block>& blocks,
                             const std::function<double(std::size_t, std::size_t)>& work_items) {
  double m = 0;
  for (std::size_t i = 0; i < blocks.size() && i < cal.devices.size(); ++i) {
    if (blocks[i].size() == 0) continue;
    m = std::max(m, cal.devices[i].predict_ms(work_items(i, blocks[i].size())));
  }
  return m;
}

std::vector<Block> measured_blocks(const Calibration& cal, std::size_t total, unsigned dim,
                                   const std::vector<std::size_t>& gran,
                                   const std::function<double(std::size_t, std::size_t)>& work_items) {
  const std::size_t n = cal.devices.size();
  if (n == 0 || gran.size() != n) {
    throw UsageError(
        fmt::format("measured split: {} calibrated devices but {} granularities; calibrate "
                    "every device of the split",
                    n, gran.size()));
  }
  for (auto g : gran) {
    if (g == 0) throw UsageError("measured split: a granularity is 0");
  }
  auto predict = [&](std::size_t i, std::size_t units) {
    return units == 0 ? 0.0 : cal.devices[i].predict_ms(work_items(i, units));
  };
  // The largest aligned slice device i finishes within T (bisection on k·g).
  auto most_within = [&](std::size_t i, double T) {
    std::size_t lo = 0, hi = total / gran[i];
    while (lo < hi) {
      const std::size_t mid = (lo + hi + 1) / 2;
      if (predict(i, mid * gran[i]) <= T)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo * gran[i];
  };
  auto covered = [&](double T) {
    std::size_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += most_within(i, T);
    return s;
  };
  double hi = 0;
  for (std::size_t i = 0; i < n; ++i) hi = std::max(hi, predict(i, total / gran[i] * gran[i]));
  double lo = 0;
  if (covered(hi) < total) {
    // No combination of aligned slices reaches the total: align_blocks names the fix.
    return align_blocks(std::vector<double>(n, 1.0 / static_cast<double>(n)), total, dim, gran);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-9 * std::max(1.0, hi); ++it) {
    const double mid = (lo + hi) / 2;
    if (covered(mid) >= total)
      hi = mid;
    else
      lo = mid;
  }
  std::vector<std::size_t> units(n);
  std::size_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += units[i] = most_within(i, hi);
  // Trim the excess from the device predicted slowest, one granularity at a time.
  std::size_t excess = sum - total;
  while (excess > 0) {
    std::optional<std::size_t> pick;
    for (std::size_t i = 0; i < n; ++i) {
      if (units[i] < gran[i] || gran[i] > excess) continue;
      if (!pick || predict(i, units[i]) > predict(*pick, units[*pick])) pick = i;
    }
    if (!pick) break;
    units[*pick] -= gran[*pick];
    excess -= gran[*pick];
  }
  if (excess > 0) {
    std::vector<double> f;
    for (auto u : units) f.push_back(static_cast<double>(u) / static_cast<double>(sum));
    return align_blocks(f, total, dim, gran);
  }
  return shares_blocks(dim, units);
}

std::vector<double> block_fractions(const std::vector<Block>& blocks, std::size_t total) {
  std::vector<double> f;
  for (const auto& b : blocks) f.push_back(total ? static_cast<double>(b.size()) / static_cast<double>(total) : 0);
  return f;
}

}  // namespace wstune
