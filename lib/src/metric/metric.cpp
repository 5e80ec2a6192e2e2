// Metrics and objectives (metric.hpp).
#include "metric/metric.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

namespace {

// The measurements on top of the kernel's names (parameters, sizes).
class MeasuredEnv final : public expr::Env {
 public:
  MeasuredEnv(const expr::Env& base, expr::MapEnv measured) : base_(base), measured_(std::move(measured)) {}
  const expr::Value* find(std::string_view name) const override {
    const expr::Value* v = measured_.find(name);
    return v ? v : base_.find(name);
  }

 private:
  const expr::Env& base_;
  expr::MapEnv measured_;
};

std::optional<double> builtin(const Trial& t, std::string_view name) {
  if (!t.ok() || t.kernel.size() == 0) return std::nullopt;
  const double ms = t.median_ms();
  if (name == "time") return ms;
  if (!t.energy) return std::nullopt;
  const double joules = t.energy->power_w * ms / 1000;  // follows the median when samples are merged
  if (name == "energy") return joules;
  if (name == "power") return t.energy->power_w;
  return joules * ms / 1000;  // edp, J*s
}

bool is_builtin(std::string_view name) {
  const auto& b = builtin_metrics();
  return std::find(b.begin(), b.end(), name) != b.end();
}

}  // namespace

std::string to_string(const Objective& o) {
  return o.name + (o.maximise ? ":max" : ":min");
}

const std::vector<std::string>& builtin_metrics() {
  static const std::vector<std::string> names{"time", "energy", "power", "edp"};
  return names;
}

MetricSet::MetricSet(const KernelSpec& spec, Problem problem) : spec_(&spec), problem_(std::move(problem)) {
  for (const UserMetric& m : spec.user_metrics()) user_.emplace_back(m.name, expr::Expression::parse(m.expression));
}

std::vector<std::string> MetricSet::names() const {
  std::vector<std::string> out = builtin_metrics();
  for (const auto& [name, e] : user_) out.push_back(name);
  return out;
}

bool MetricSet::knows(std::string_view name) const {
  const auto n = names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

bool MetricSet::needs_energy(std::string_view name) const {
  if (wstune::needs_energy(Objective{std::string(name), false})) return true;
  for (const auto& [n, e] : user_) {
    if (n != name) continue;
    const auto reads = e.names();
    return std::find(reads.begin(), reads.end(), "energy") != reads.end();
  }
  return false;
}

std::optional<double> MetricSet::value(const Trial& t, std::string_view name) const {
  if (is_builtin(name)) return builtin(t, name);
  const auto it = std::find_if(user_.begin(), user_.end(), [&](const auto& m) { return m.first == name; });
  if (it == user_.end() || !spec_)
    throw UsageError(fmt::format("unknown metric '{}'; use one of: {}", name, fmt::join(names(), ", ")));
  if (!t.ok() || t.kernel.size() == 0) return std::nullopt;
  expr::MapEnv measured;
  for (const std::string& b : builtin_metrics())
    if (const auto v = builtin(t, b)) measured.set(b, expr::Value(*v));
  const auto base = spec_->metric_env(with_params(problem_, t.params));
  try {
    const expr::Value v = it->second.eval(MeasuredEnv(*base, std::move(measured)));
    if (!v.is_number()) return std::nullopt;
    const double d = v.as_double();
    return std::isfinite(d) ? std::optional(d) : std::nullopt;
  } catch (const expr::ExprError&) {  // energy not measured, a division by zero: no value
    return std::nullopt;
  }
}

nlohmann::json MetricSet::values_json(const Trial& t) const {
  nlohmann::json j = nlohmann::json::object();
  for (const std::string& n : names())
    if (const auto v = value(t, n)) j[n] = *v;
  return j;
}

Objective parse_objective(std::string_view text, const MetricSet& metrics, std::string_view what) {
  Objective o;
  const auto colon = text.rfind(':');
  o.name = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) {
    const std::string_view dir = text.substr(colon + 1);
    if (dir != "min" && dir != "max")
      throw UsageError(fmt::format("{} '{}': the direction '{}' is neither min nor max (NAME, NAME:min or NAME:max)",
                                   what, text, dir));
    o.maximise = dir == "max";
  }
  if (!metrics.knows(o.name)) {
    throw UsageError(
        fmt::format("{} '{}': no metric '{}'; use one of: {} (a tuning file adds its own in "
                    "wstune.Metrics)",
                    what, text, o.name, fmt::join(metrics.names(), ", ")));
  }
  return o;
}

std::vector<Objective> parse_objectives(std::string_view text, const MetricSet& metrics, std::string_view what) {
  std::vector<Objective> out;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const std::string_view one = text.substr(start, comma - start);
    if (one.empty()) throw UsageError(fmt::format("{} '{}': an empty objective; give e.g. time,energy", what, text));
    out.push_back(parse_objective(one, metrics, what));
    if (!seen.insert(out.back().name).second)
      throw UsageError(fmt::format("{} '{}': '{}' is named twice", what, text, out.back().name));
    start = comma + 1;
  }
  return out;
}

bool needs_energy(const Objective& o) {
  return o.name == "energy" || o.name == "power" || o.name == "edp";
}

std::function<std::optional<double>(const Trial&)> objective_score(const MetricSet& metrics, const Objective& o) {
  return [metrics, o](const Trial& t) -> std::optional<double> {
    const auto v = metrics.value(t, o.name);
    if (!v) return std::nullopt;
    return o.maximise ? -*v : *v;
  };
}

}  // namespace wstune
