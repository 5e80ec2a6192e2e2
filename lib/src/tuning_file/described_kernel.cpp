// The KernelSpec of a kernel described by a T1 tuning file (tuning_file.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "tuning_file/compiled.hpp"
#include "tuning_file/conditions.hpp"
#include "wstune/error.hpp"

namespace wstune {

std::string_view to_string(ValidationMethod m) noexcept {
  switch (m) {
    case ValidationMethod::absolute_difference:
      return "AbsoluteDifference";
    case ValidationMethod::side_by_side:
      return "SideBySideComparison";
    case ValidationMethod::side_by_side_relative:
      return "SideBySideRelativeComparison";
    case ValidationMethod::sum_relative:
      return "SumRelativeComparison";
  }
  return "SideBySideComparison";
}

namespace t1 {

using nlohmann::json;

// ---- bindings and the compiled file -------------------------------------------------

expr::Value* Bindings::slot(std::string_view name) {
  for (auto it = values_.rbegin(); it != values_.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

const expr::Value* Bindings::find(std::string_view name) const {
  for (auto it = values_.rbegin(); it != values_.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

expr::Value to_value(const json& j) {
  if (j.is_boolean()) return expr::Value(j.get<bool>());
  if (j.is_number_integer()) return expr::Value(j.get<std::int64_t>());
  if (j.is_number()) return expr::Value(j.get<double>());
  if (j.is_string()) return expr::Value(j.get<std::string>());
  throw UsageError(fmt::format("{} is not a number, bool or string", j.dump()));
}

json to_json_value(const expr::Value& v) {
  switch (v.kind()) {
    case expr::Value::Kind::integer:
      return v.as_int();
    case expr::Value::Kind::real:
      return v.as_double();
    case expr::Value::Kind::boolean:
      return v.as_bool();
    case expr::Value::Kind::string:
      return v.as_string();
    case expr::Value::Kind::list:
      break;
  }
  throw UsageError(fmt::format("{} is a list, not a parameter value", v.repr()));
}

std::size_t positive_size(const expr::Expression& e, const expr::Env& env, const std::string& file,
                          std::string_view what) {
  expr::Value v;
  try {
    v = e.eval(env);
  } catch (const expr::ExprError& err) {
    fail(file, what, err.what());
  }
  const bool integral =
      v.kind() == expr::Value::Kind::integer || (v.kind() == expr::Value::Kind::real && std::isfinite(v.as_double()) &&
                                                 v.as_double() == std::floor(v.as_double()));
  if (!integral || v.as_double() < 1 || v.as_double() > 9.0e15)
    fail(file, what, fmt::format("'{}' gives {}, not a positive integer", e.text(), v.repr()));
  return static_cast<std::size_t>(v.as_double());
}

expr::Value CompiledFile::problem_size_value(const std::vector<std::size_t>& n, const expr::Env* params) const {
  std::vector<expr::Value> ps;
  std::optional<Bindings> reference;
  for (std::size_t k = 0; k < file.problem_size.size(); ++k) {
    if (k >= problem_size_exprs.size() || !problem_size_exprs[k]) {
      ps.emplace_back(static_cast<std::int64_t>(n.at(k)));
      continue;
    }
    if (!params) {  // no configuration: the reference configuration's values
      if (!reference) {
        reference.emplace();
        for (std::size_t v = 0; v < file.size_variables.size(); ++v)
          reference->set(file.size_variables[v].first,
                         expr::Value(static_cast<std::int64_t>(n.at(file.problem_size.size() + v))));
        for (const auto& [name, v] : file.reference_params.items()) reference->set(name, to_value(v));
      }
      params = &*reference;
    }
    ps.emplace_back(static_cast<std::int64_t>(positive_size(*problem_size_exprs[k], *params, file.path,
                                                            fmt::format("KernelSpecification.ProblemSize[{}]", k))));
  }
  return expr::Value(std::move(ps));
}

Bindings CompiledFile::size_bindings(const std::vector<std::size_t>& n) const {
  Bindings b;
  b.set("ProblemSize", problem_size_value(n, nullptr));
  for (std::size_t k = 0; k < file.size_variables.size(); ++k)
    b.set(file.size_variables[k].first, expr::Value(static_cast<std::int64_t>(n.at(file.problem_size.size() + k))));
  return b;
}

Bindings CompiledFile::config_bindings(const std::vector<std::size_t>& n, const json& params) const {
  Bindings b;
  for (std::size_t k = 0; k < file.size_variables.size(); ++k)
    b.set(file.size_variables[k].first, expr::Value(static_cast<std::int64_t>(n.at(file.problem_size.size() + k))));
  for (const auto& [name, v] : params.items()) b.set(name, to_value(v));
  b.set("ProblemSize", problem_size_value(n, &b));
  return b;
}

Bindings CompiledFile::list_bindings(const std::vector<std::size_t>& n) const {
  Bindings b = size_bindings(n);
  for (const auto& p : file.parameters) {
    std::vector<expr::Value> vs;
    for (const auto& v : p.values) vs.push_back(to_value(v));
    b.set(p.name, expr::Value(std::move(vs)));
  }
  return b;
}

bool CompiledFile::satisfies(const std::vector<std::size_t>& n, const json& params) const {
  if (conditions.empty()) return true;
  const Bindings b = config_bindings(n, params);
  for (std::size_t k = 0; k < conditions.size(); ++k) {
    try {
      if (!conditions[k].eval(b).as_bool()) return false;
    } catch (const expr::ExprError& e) {
      fail(file.path, fmt::format("ConfigurationSpace.Conditions[{}].Expression", k),
           fmt::format("{} (with {})", e.what(), params.dump()));
    }
  }
  return true;
}

std::vector<Constraint> CompiledFile::constraints(const std::vector<std::size_t>& n) const {
  const bool problem_size_reads_parameters =
      std::any_of(problem_size_exprs.begin(), problem_size_exprs.end(), [](const auto& e) { return e.has_value(); });
  if (!problem_size_reads_parameters)
    return condition_constraints(file.parameters, conditions, size_bindings(n), file.path);
  // ProblemSize is an expression of tuning parameters (Kernel Tuner's
  // reduction): the conditions that do not name it are compiled against the
  // size variables; one that names it also reads ProblemSize's parameters
  // and is evaluated with each combination's ProblemSize, as satisfies() does.
  Bindings sizes;
  for (std::size_t k = 0; k < file.size_variables.size(); ++k)
    sizes.set(file.size_variables[k].first, expr::Value(static_cast<std::int64_t>(n.at(file.problem_size.size() + k))));
  std::vector<Constraint> out = condition_constraints(file.parameters, conditions, sizes, file.path);
  for (std::size_t c = 0; c < conditions.size(); ++c) {
    const auto names = conditions[c].names();
    if (std::find(names.begin(), names.end(), "ProblemSize") != names.end()) out[c] = problem_size_constraint(n, c);
  }
  return out;
}

Constraint CompiledFile::problem_size_constraint(const std::vector<std::size_t>& n, std::size_t c) const {
  std::vector<std::uint32_t> read = read_parameters(file.parameters, conditions[c]);
  for (const auto& e : problem_size_exprs) {
    if (!e) continue;
    const auto more = read_parameters(file.parameters, *e);
    read.insert(read.end(), more.begin(), more.end());
  }
  std::sort(read.begin(), read.end());
  read.erase(std::unique(read.begin(), read.end()), read.end());
  Constraint con;
  con.params = read;
  con.holds = [this, n, c, read](std::span<const std::uint32_t> idx) {
    json params = json::object();
    for (std::size_t j = 0; j < read.size(); ++j)
      params[file.parameters[read[j]].name] = file.parameters[read[j]].values[idx[j]];
    try {
      return conditions[c].eval(config_bindings(n, params)).as_bool();
    } catch (const expr::ExprError& e) {
      fail(file.path, fmt::format("ConfigurationSpace.Conditions[{}].Expression", c),
           fmt::format("{} (with {})", e.what(), params.dump()));
    }
  };
  return con;
}

Extent CompiledFile::global_size(const std::vector<std::size_t>& n, const json& params) const {
  static constexpr const char* what[3] = {"KernelSpecification.GlobalSize.X", "KernelSpecification.GlobalSize.Y",
                                          "KernelSpecification.GlobalSize.Z"};
  static constexpr const char* div[3] = {"KernelSpecification.GridDivX", "KernelSpecification.GridDivY",
                                         "KernelSpecification.GridDivZ"};
  const Bindings b = config_bindings(n, params);
  Extent e{1, 1, 1, file.dims};
  if (file.grid_div) {  // Kernel Tuner: ceil(ProblemSize / Π GridDiv) work-groups of LocalSize
    const Extent l = *local_size(n, params);
    const auto& ps = b.find("ProblemSize")->as_list();
    for (unsigned d = 0; d < file.dims; ++d) {
      const auto size = d < ps.size() ? static_cast<std::size_t>(ps[d].as_int()) : std::size_t{1};
      std::size_t divisor = 1;
      for (std::size_t k = 0; k < grid_divisors[d].size(); ++k)
        divisor *= positive_size(grid_divisors[d][k], b, file.path, fmt::format("{}[{}]", div[d], k));
      e.at(d) = (size + divisor - 1) / divisor * l[d];
    }
    return e;
  }
  for (unsigned d = 0; d < file.dims; ++d) e.at(d) = positive_size(*global[d], b, file.path, what[d]);
  if (file.global_size_type == GlobalSizeType::cuda) {  // work-groups of LocalSize
    const Extent l = *local_size(n, params);
    for (unsigned d = 0; d < file.dims; ++d) e.at(d) *= l[d];
  }
  return e;
}

LocalSize CompiledFile::local_size(const std::vector<std::size_t>& n, const json& params) const {
  if (file.search_local) return std::nullopt;
  static constexpr const char* what[3] = {"KernelSpecification.LocalSize.X", "KernelSpecification.LocalSize.Y",
                                          "KernelSpecification.LocalSize.Z"};
  const Bindings b = config_bindings(n, params);
  Extent e{1, 1, 1, file.dims};
  for (unsigned d = 0; d < file.dims; ++d) e.at(d) = positive_size(*local[d], b, file.path, what[d]);
  return e;
}

std::size_t CompiledFile::buffer_elements(std::size_t a, const std::vector<std::size_t>& n) const {
  return positive_size(*sizes.at(a), list_bindings(n), file.path,
                       fmt::format("KernelSpecification.Arguments[{}].Size", a));
}

std::vector<std::size_t> CompiledFile::default_numbers() const {
  std::vector<std::size_t> n = file.problem_size;
  for (const auto& [name, v] : file.size_variables) n.push_back(v);
  return n;
}

namespace {

// ---- buffer data ---------------------------------------------------------------------

void fill_constant(HostBuffer& b, double value) {
  if (b.empty()) return;
  for (std::size_t k = 0; k < b.type().width; ++k) set_component(b, k, value);
  const std::size_t e = b.type().bytes();
  for (std::size_t done = e; done < b.bytes(); done *= 2)
    std::memcpy(b.data() + done, b.data(), std::min(done, b.bytes() - done));
}

void fill_random(HostBuffer& b, double bound, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t n = components(b);
  if (b.type().is_float()) {
    std::uniform_real_distribution<double> dist(0.0, bound > 0 ? bound : 1.0);
    for (std::size_t k = 0; k < n; ++k) set_component(b, k, dist(rng));
  } else {
    const auto hi = static_cast<std::int64_t>(std::max(1.0, std::min(bound, 9.0e15))) - 1;
    std::uniform_int_distribution<std::int64_t> dist(0, b.type().scalar == ScalarType::boolean ? 1 : hi);
    for (std::size_t k = 0; k < n; ++k) set_component(b, k, static_cast<double>(dist(rng)));
  }
}

// `i` runs over the components; threads share the (immutable) expression.
void fill_generator(HostBuffer& b, const expr::Expression& e, const Bindings& sizes, const std::string& file,
                    const std::string& what) {
  const std::size_t n = components(b);
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 32);
  const std::size_t chunk = std::max<std::size_t>(4096, (n + threads - 1) / threads);
  std::vector<std::thread> pool;
  std::vector<std::string> errors((n + chunk - 1) / chunk);
  for (std::size_t t = 0, lo = 0; lo < n; ++t, lo += chunk) {
    pool.emplace_back([&, t, lo] {
      Bindings env = sizes;
      env.set("i", expr::Value(std::int64_t{0}));
      expr::Value* i = env.slot("i");
      try {
        for (std::size_t k = lo; k < std::min(n, lo + chunk); ++k) {
          *i = expr::Value(static_cast<std::int64_t>(k));
          const expr::Value v = e.eval(env);
          if (!v.is_number()) throw UsageError(fmt::format("gives {} for i = {}, not a number", v.repr(), k));
          set_component(b, k, v.as_double());
        }
      } catch (const std::exception& ex) {
        errors[t] = ex.what();
      }
    });
  }
  for (auto& t : pool) t.join();
  for (const auto& err : errors)
    if (!err.empty()) fail(file, what, err);
}

void fill_binary(HostBuffer& b, const std::string& source, const std::string& file, const std::string& what) {
  std::ifstream in(source, std::ios::binary | std::ios::ate);
  if (!in) fail(file, what, fmt::format("cannot read {}", source));
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size != b.bytes()) {
    fail(file, what,
         fmt::format("{} has {} bytes, but {} elements of {} for this problem size need {}", source, size, b.size(),
                     b.type().name(), b.bytes()));
  }
  in.seekg(0);
  in.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(size));
}

// A component-wise comparison (KTT's ValidationMethod definitions).
struct Comparison {
  double error = 0;  // the method's metric
  std::size_t worst = 0;
};

// The method's metric over components [lo, hi); `at(buffer, k)` reads one
// component as a double.
template <class Load>
Comparison compare_range(const HostBuffer& out, const HostBuffer& ref, ValidationMethod m, std::size_t lo,
                         std::size_t hi, Load at) {
  Comparison c;
  for (std::size_t k = lo; k < hi; ++k) {
    const double o = at(out, k), r = at(ref, k);
    if (std::isnan(o) && std::isnan(r)) continue;
    double e = std::fabs(o - r);
    if (m == ValidationMethod::side_by_side_relative && r != 0) e /= std::fabs(r);
    if (std::isnan(e)) e = INFINITY;
    if (m == ValidationMethod::absolute_difference) {
      c.error += e;
    } else if (e > c.error) {
      c.error = e;
      c.worst = k;
    }
  }
  return c;
}

// Loads of one scalar type, without the per-component type dispatch of
// component() (float and int buffers of many millions of elements are the
// common case: verification is most of the tuner's time per trial there).
template <class T>
double load_as(const HostBuffer& b, std::size_t k) {
  T v;
  std::memcpy(&v, b.data() + k * sizeof(T), sizeof(T));
  return static_cast<double>(v);
}

Comparison compare_chunk(const HostBuffer& out, const HostBuffer& ref, ValidationMethod m, std::size_t lo,
                         std::size_t hi) {
  switch (ref.type().scalar) {
    case ScalarType::f32:
      return compare_range(out, ref, m, lo, hi, load_as<float>);
    case ScalarType::f64:
      return compare_range(out, ref, m, lo, hi, load_as<double>);
    case ScalarType::i32:
      return compare_range(out, ref, m, lo, hi, load_as<std::int32_t>);
    case ScalarType::u32:
      return compare_range(out, ref, m, lo, hi, load_as<std::uint32_t>);
    default:
      return compare_range(out, ref, m, lo, hi, [](const HostBuffer& b, std::size_t k) { return component(b, k); });
  }
}

Comparison compare(const HostBuffer& out, const HostBuffer& ref, ValidationMethod m) {
  const auto parts = detail::parallel_chunks(
      components(ref), [&](std::size_t lo, std::size_t hi) { return compare_chunk(out, ref, m, lo, hi); });
  Comparison c;
  for (const Comparison& part : parts) {  // chunks in order: the sum adds left to right
    if (m == ValidationMethod::absolute_difference)
      c.error += part.error;
    else if (part.error > c.error)
      c = part;
  }
  return c;
}

// ---- the kernel ----------------------------------------------------------------------

class DescribedKernel final : public KernelSpec {
 public:
  explicit DescribedKernel(CompiledFile c) : c_(std::move(c)) {
    const auto& args = c_.file.arguments;
    for (std::size_t a = 0; a < args.size(); ++a) {
      if (args[a].kind != ArgumentKind::vector) continue;
      vector_index_.push_back(a);
      if (args[a].access != Access::read_only) written_.push_back(a);
    }
    description_ = fmt::format("{} from {}", c_.file.kernel_name, c_.file.path);
  }

  const TuningFile& file() const { return c_.file; }

  std::string_view name() const override { return c_.file.kernel_name; }
  std::string_view description() const override { return description_; }
  std::string_view size_syntax() const override {
    return "AxBxC (ProblemSize), ProblemSize[k]=V or NAME=V (a wstune.Sizes variable), several separated by commas";
  }
  std::string_view source() const override { return c_.file.source; }
  std::string source_name() const override { return c_.file.kernel_file; }
  std::string_view entry_point() const override { return c_.file.kernel_name; }
  unsigned dims() const override { return c_.file.dims; }
  Priority priority() const override { return c_.file.priority; }

  const std::vector<TuningParameter>& tuning_parameters() const override { return c_.file.parameters; }
  bool satisfies_constraints(const Problem& p) const override { return c_.satisfies(p.n, params_of(p)); }
  std::vector<Constraint> parameter_constraints(const Problem& p) const override { return c_.constraints(p.n); }
  // The names of the NDRange's, GridDiv's, ProblemSize's, the local size's
  // and the split's expressions.
  std::optional<std::vector<std::uint32_t>> ndrange_parameters() const override {
    std::vector<std::string> names;
    auto add = [&](const std::optional<expr::Expression>& e) {
      if (!e) return;
      const auto n = e->names();
      names.insert(names.end(), n.begin(), n.end());
    };
    for (unsigned d = 0; d < 3; ++d) {
      add(c_.global[d]);
      if (!c_.file.search_local) add(c_.local[d]);
      for (const auto& e : c_.grid_divisors[d]) add(e);
    }
    for (const auto& e : c_.problem_size_exprs) add(e);  // ProblemSize over parameters
    if (c_.split) {
      add(c_.split->units);
      add(c_.split->granularity);
      add(c_.split->work_items);
    }
    std::vector<std::uint32_t> out;
    for (std::size_t k = 0; k < c_.file.parameters.size(); ++k)
      if (std::find(names.begin(), names.end(), c_.file.parameters[k].name) != names.end())
        out.push_back(static_cast<std::uint32_t>(k));
    return out;
  }
  std::string build_options(const Problem&) const override {
    std::string o;
    for (const auto& opt : c_.file.compiler_options) o += (o.empty() ? "" : " ") + opt;
    return o;
  }
  std::string source_defines(const Problem& p) const override { return define_lines(params_of(p)); }
  LocalSize parameter_local(const Problem& p) const override { return c_.local_size(p.n, params_of(p)); }
  bool guards_bounds() const override { return c_.file.guards_bounds; }
  bool runs_slices() const override { return c_.split.has_value(); }
  bool null_local_allowed() const override {
    return std::none_of(c_.local_depends_on_local_size.begin(), c_.local_depends_on_local_size.end(),
                        [](bool b) { return b; });
  }
  nlohmann::json reference_params() const override { return c_.file.reference_params; }

  Problem parse_size(std::string_view text) const override;
  Problem paper_size() const override { return problem_of(c_.default_numbers()); }
  unsigned paper_repetitions() const override { return 1; }

  std::size_t split_units(const Problem& p, unsigned dim) const override {
    if (c_.split && dim == c_.split->dim)
      return positive_size(*c_.split->units, c_.size_bindings(p.n), c_.file.path, "wstune.Split.Units");
    // The problem's blocks do not depend on a configuration: a ProblemSize
    // entry that names parameters counts with the reference's values.
    return dim < c_.file.problem_size.size()
               ? static_cast<std::size_t>(c_.problem_size_value(p.n, nullptr).as_list().at(dim).as_int())
               : 1;
  }
  std::size_t slice_multiple(const Problem& p, unsigned) const override {
    if (!c_.split || !c_.split->granularity) return 1;
    return positive_size(*c_.split->granularity, c_.config_bindings(p.n, params_of(p)), c_.file.path,
                         "wstune.Split.Granularity");
  }
  Extent block_global(const Problem& p, const Block& b) const override {
    Extent g = c_.global_size(p.n, params_of(p));
    if (is_whole(p, b)) return g;
    check_slice(p, b);
    g.at(b.dim) = slice_work_items(p, b.size());
    return g;
  }
  Extent problem_extent(const Problem& p) const override {
    Extent e{1, 1, 1, 1};
    const std::size_t k =
        std::min<std::size_t>(3, c_.file.problem_size.empty() ? p.n.size() : c_.file.problem_size.size());
    for (std::size_t d = 0; d < k; ++d) e.at(static_cast<unsigned>(d)) = problem_number(p, d);
    e.dims = static_cast<unsigned>(std::max<std::size_t>(1, k));
    return e;
  }
  std::vector<UserMetric> user_metrics() const override {
    std::vector<UserMetric> out;
    for (const auto& [name, e] : c_.metrics) out.push_back({name, e.text()});
    return out;
  }
  std::unique_ptr<expr::Env> metric_env(const Problem& p) const override {
    return std::make_unique<Bindings>(c_.config_bindings(p.n, params_of(p)));
  }
  double ops_per_work_item(const Problem& p) const override {
    if (!c_.ops_per_work_item) return 1;
    return static_cast<double>(positive_size(*c_.ops_per_work_item, c_.config_bindings(p.n, params_of(p)), c_.file.path,
                                             "wstune.OpsPerWorkItem"));
  }

  std::vector<HostBuffer> generate_inputs(const Problem& p, std::uint64_t seed) const override {
    std::vector<HostBuffer> in;
    for (const std::size_t a : vector_index_) {
      const auto& arg = c_.file.arguments[a];
      HostBuffer b(arg.type, c_.buffer_elements(a, p.n));
      fill(b, arg.fill, c_.generators[a], p, seed + 1000003 * (a + 1),
           fmt::format("KernelSpecification.Arguments[{}]", a));
      in.push_back(std::move(b));
    }
    return in;
  }

  bool has_reference() const override { return !c_.file.references.empty(); }

  // One buffer per written argument; empty where the file gives no reference.
  std::vector<HostBuffer> reference(const Problem& p, const std::vector<HostBuffer>&) const override {
    if (!has_reference()) throw Error(fmt::format("{}: no ReferenceArguments", c_.file.path));
    std::vector<HostBuffer> refs;
    for (const std::size_t a : written_) {
      const auto& arg = c_.file.arguments[a];
      const auto r = reference_of(arg.name);
      if (!r) {
        refs.emplace_back(arg.type, 0);
        continue;
      }
      HostBuffer b(arg.type, c_.buffer_elements(a, p.n));
      fill(b, c_.file.references[*r].fill, c_.reference_generators[*r], p, 7 + 1000003 * (a + 1),
           fmt::format("KernelSpecification.ReferenceArguments[{}]", *r));
      refs.push_back(std::move(b));
    }
    return refs;
  }

  Verdict verify(const Problem&, const std::vector<HostBuffer>& outs,
                 const std::vector<HostBuffer>& refs) const override {
    Verdict worst{true, 0, 0, "no output compared"};
    double worst_ratio = -1;
    for (std::size_t k = 0; k < written_.size(); ++k) {
      const auto& arg = c_.file.arguments[written_[k]];
      if (k >= refs.size() || refs[k].empty()) continue;
      const auto [method, threshold] = comparison_for(arg);
      Verdict v;
      v.tolerance = threshold;
      if (k >= outs.size() || outs[k].size() != refs[k].size() || !(outs[k].type() == refs[k].type())) {
        v.max_error = INFINITY;
        v.detail =
            fmt::format("{}: {} elements, expected {}", arg.name, k < outs.size() ? outs[k].size() : 0, refs[k].size());
      } else if (method == ValidationMethod::sum_relative) {
        double out_sum = 0, ref_sum = 0;
        for (std::size_t i = 0; i < components(refs[k]); ++i) {
          out_sum += component(outs[k], i);
          ref_sum += component(refs[k], i);
        }
        v.max_error = std::fabs(out_sum - ref_sum) / (ref_sum != 0 ? std::fabs(ref_sum) : 1.0);
        if (std::isnan(v.max_error)) v.max_error = INFINITY;
        v.ok = v.max_error <= threshold;
        v.detail = fmt::format("SumRelativeComparison of {} over {} elements of {} (sum {} vs {})", arg.name,
                               refs[k].size(), arg.type.name(), out_sum, ref_sum);
      } else {
        const Comparison c = compare(outs[k], refs[k], method);
        v.max_error = c.error;
        v.ok = c.error <= threshold;
        v.detail = fmt::format("{} of {} over {} elements of {}", to_string(method), arg.name, refs[k].size(),
                               arg.type.name());
        if (!v.ok && method != ValidationMethod::absolute_difference)
          v.detail += fmt::format(" (worst at component {}: {} vs {})", c.worst, component(outs[k], c.worst),
                                  component(refs[k], c.worst));
      }
      const double ratio = v.ok ? (threshold > 0 ? v.max_error / threshold : 0) : INFINITY;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = v;
      }
      if (!v.ok) return v;
    }
    return worst;
  }

  std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>& inputs,
                                       const Block& b) const override {
    std::vector<HostBuffer> in;  // views of `inputs` (KernelSpec::block_inputs): no copy of their bytes
    if (is_whole(p, b)) {
      for (const auto& h : inputs) in.push_back(h.view());
      return in;
    }
    check_slice(p, b);
    for (std::size_t k = 0; k < vector_index_.size(); ++k) {
      const auto [first, count] = range(vector_index_[k], p, b, inputs.at(k).size());
      in.push_back(inputs.at(k).view(first, count));
    }
    return in;
  }
  std::vector<InputPlacement> input_placement(const Problem& p, const Block& b) const override {
    if (is_whole(p, b)) return {};
    std::vector<InputPlacement> place;
    for (const std::size_t a : vector_index_) {
      const std::size_t n = c_.buffer_elements(a, p.n);
      place.push_back(InputPlacement{range(a, p, b, n).first, n});
    }
    return place;
  }
  std::vector<OutputBuffer> outputs(const Problem& p, const Block& b) const override {
    const bool whole = is_whole(p, b);
    std::vector<OutputBuffer> out;
    for (const std::size_t a : written_) {
      const auto& arg = c_.file.arguments[a];
      const std::size_t n = c_.buffer_elements(a, p.n);
      const auto input =
          static_cast<std::size_t>(std::find(vector_index_.begin(), vector_index_.end(), a) - vector_index_.begin());
      const auto [first, count] = whole ? std::pair<std::size_t, std::size_t>{0, n} : range(a, p, b, n);
      // Every written buffer starts each run from its fill (restore_each_run):
      // a kernel that accumulates into an output declared WriteOnly (KTT's
      // `energyGrid[i] += ...`) gives the same output however often it runs,
      // so the warm-up and timing runs never feed verification.
      out.push_back(OutputBuffer{arg.type, n, count, input, true, first});
    }
    return out;
  }
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override {
    std::vector<HostBuffer> out;
    for (const std::size_t a : written_) out.emplace_back(c_.file.arguments[a].type, c_.buffer_elements(a, p.n));
    return out;
  }
  void place_block(const Problem& p, const Block& b, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    if (is_whole(p, b)) {
      full = bo;
      return;
    }
    for (std::size_t k = 0; k < written_.size(); ++k)
      full.at(k).write(range(written_[k], p, b, full.at(k).size()).first, bo.at(k));
  }

  // A slice runs with a global work offset: the kernel sees the work-items it
  // would have seen in the whole NDRange.
  std::vector<cl::Event> enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem& p, const Block& b,
                                 const std::vector<cl::Buffer>& in, const std::vector<cl::Buffer>& out,
                                 const LocalSize& local, const Extent& global) const override {
    set_args(kernel, p, b, in, out, local);
    Extent offset{0, 0, 0, global.dims};
    if (!is_whole(p, b)) offset.at(b.dim) = b.begin == 0 ? 0 : slice_work_items(p, b.begin);
    const cl::NDRange loc = local ? ndrange(*local, global.dims) : cl::NullRange;
    cl::Event ev;
    WSTUNE_CL_CHECK(queue.enqueueNDRangeKernel(kernel, ndrange(offset), ndrange(global), loc, nullptr, &ev));
    return {ev};
  }

 protected:
  void set_args(cl::Kernel& kernel, const Problem& p, const Block&, const std::vector<cl::Buffer>& in,
                const std::vector<cl::Buffer>& out, const LocalSize& local) const override {
    std::size_t next_in = 0, next_out = 0;
    for (std::size_t a = 0; a < c_.file.arguments.size(); ++a) {
      const auto& arg = c_.file.arguments[a];
      const auto index = static_cast<cl_uint>(a);
      switch (arg.kind) {
        case ArgumentKind::vector:
          WSTUNE_CL_CHECK(
              kernel.setArg(index, arg.access == Access::read_only ? in.at(next_in++) : out.at(next_out++)));
          break;
        case ArgumentKind::scalar: {
          HostBuffer v(arg.type, 1);
          fill_constant(v, scalar_value(a, p));
          WSTUNE_CL_CHECK(kernel.setArg(index, v.bytes(), v.data()));
          break;
        }
        case ArgumentKind::local: {
          Bindings b = c_.config_bindings(p.n, params_of(p));
          const Extent l = local.value_or(Extent{0, 0, 0, 3});
          b.set("LocalSize",
                expr::Value(std::vector<expr::Value>{static_cast<std::int64_t>(l.x), static_cast<std::int64_t>(l.y),
                                                     static_cast<std::int64_t>(l.z)}));
          const std::size_t n =
              positive_size(*c_.sizes[a], b, c_.file.path, fmt::format("KernelSpecification.Arguments[{}].Size", a));
          WSTUNE_CL_CHECK(kernel.setArg(index, cl::Local(n * arg.type.bytes())));
          break;
        }
      }
    }
  }

 private:
  // ProblemSize[d] of `p`: its number, or its expression's value with the
  // configuration's parameters (the reference's without).
  std::size_t problem_number(const Problem& p, std::size_t d) const {
    if (d < c_.problem_size_exprs.size() && c_.problem_size_exprs[d])
      return static_cast<std::size_t>(
          c_.config_bindings(p.n, params_of(p)).find("ProblemSize")->as_list().at(d).as_int());
    return p.n.at(d);
  }

  // The ProblemSize entries --size binds (numbers, not expressions).
  std::vector<std::size_t> bindable() const {
    std::vector<std::size_t> k;
    for (std::size_t d = 0; d < c_.file.problem_size.size(); ++d)
      if (c_.file.problem_size_expressions.at(d).empty()) k.push_back(d);
    return k;
  }

  Problem problem_of(std::vector<std::size_t> n) const {
    Problem p;
    p.kernel = c_.file.kernel_name;
    std::string text;
    for (const std::size_t k : bindable()) text += (text.empty() ? "" : "x") + std::to_string(n[k]);
    for (std::size_t k = 0; k < c_.file.size_variables.size(); ++k)
      text += fmt::format("{}{}={}", text.empty() ? "" : ",", c_.file.size_variables[k].first,
                          n[c_.file.problem_size.size() + k]);
    p.text = text.empty() ? "fixed" : text;
    p.n = std::move(n);
    return p;
  }

  // A file without ProblemSize and wstune.Sizes has one problem, "fixed"
  // (its paper_size()): the text "fixed" names it, any other contradicts it.
  Problem fixed_size(std::string_view text) const {
    if (text != "fixed") {
      throw UsageError(
          fmt::format("{}: --size '{}': this file's sizes are fixed (it has no ProblemSize number or wstune.Sizes); "
                      "leave the size out "
                      "(or give 'fixed')",
                      c_.file.path, text));
    }
    return paper_size();
  }

  bool is_whole(const Problem& p, const Block& b) const { return b.begin == 0 && b.end == split_units(p, b.dim); }

  // A slice needs the split description, along its dimension.
  void check_slice(const Problem& p, const Block& b) const {
    if (!c_.split) {
      throw UsageError(
          fmt::format("{}: a block [{}, {}) of the problem: splitting a described kernel needs "
                      "wstune.Split (the split dimension and each written buffer's range; "
                      "docs/tuning-files.md)",
                      c_.file.path, b.begin, b.end));
    }
    if (b.dim != c_.split->dim || b.begin >= b.end || b.end > split_units(p, b.dim)) {
      throw UsageError(
          fmt::format("{}: block [{}, {}) along dimension {}: the kernel splits along dimension {} "
                      "into {} units",
                      c_.file.path, b.begin, b.end, b.dim, c_.split->dim, split_units(p, c_.split->dim)));
    }
  }

  // The parameters a size expression sees: the configuration's, else the reference's.
  const json& params_of(const Problem& p) const { return p.params.empty() ? c_.file.reference_params : p.params; }

  // Work-items along the split dimension for `units` split units.
  std::size_t slice_work_items(const Problem& p, std::size_t units) const {
    if (!c_.split->work_items) return units;
    Bindings env = c_.config_bindings(p.n, params_of(p));
    env.set("units", expr::Value(static_cast<std::int64_t>(units)));
    return positive_size(*c_.split->work_items, env, c_.file.path, "wstune.Split.WorkItems");
  }

  // The element range [first, first + count) of argument `a` (n elements)
  // that block `b` reads or writes: wstune.Split.Buffers clamped to the
  // buffer, or the whole buffer.
  std::pair<std::size_t, std::size_t> range(std::size_t a, const Problem& p, const Block& b, std::size_t n) const {
    if (!c_.split || !c_.split->first[a]) return {0, n};
    Bindings env = c_.config_bindings(p.n, params_of(p));
    env.set("first", expr::Value(static_cast<std::int64_t>(b.begin)));
    env.set("units", expr::Value(static_cast<std::int64_t>(b.size())));
    const std::string at = "wstune.Split.Buffers." + c_.file.arguments[a].name;
    auto eval = [&](const expr::Expression& e, const char* what) -> std::int64_t {
      try {
        return e.eval(env).as_int();
      } catch (const expr::ExprError& err) {
        fail(c_.file.path, at + what, err.what());
      }
    };
    const std::int64_t lo = eval(*c_.split->first[a], ".First");
    const std::int64_t hi = lo + eval(*c_.split->count[a], ".Count");
    const auto clamp = [&](std::int64_t v) {
      return static_cast<std::size_t>(std::clamp<std::int64_t>(v, 0, static_cast<std::int64_t>(n)));
    };
    return {clamp(lo), clamp(hi) - clamp(lo)};
  }

  // A scalar argument's value: wstune.ScalarValues' expression, else FillValue.
  double scalar_value(std::size_t a, const Problem& p) const {
    if (!c_.scalar_values[a]) return c_.file.arguments[a].fill.value;
    const std::string what = "wstune.ScalarValues." + c_.file.arguments[a].name;
    expr::Value v;
    try {
      v = c_.scalar_values[a]->eval(c_.config_bindings(p.n, params_of(p)));
    } catch (const expr::ExprError& e) {
      fail(c_.file.path, what, e.what());
    }
    if (!v.is_number()) fail(c_.file.path, what, fmt::format("gives {}, not a number", v.repr()));
    return v.as_double();
  }

  std::optional<std::size_t> reference_of(const std::string& target) const {
    for (std::size_t r = 0; r < c_.file.references.size(); ++r)
      if (c_.file.references[r].target == target) return r;
    return std::nullopt;
  }

  // The method and threshold for a written argument: its reference's, else
  // wstune.Validation, else relative 1e-4 for floats and exact for integers.
  std::pair<ValidationMethod, double> comparison_for(const TuningFileArgument& arg) const {
    if (const auto r = reference_of(arg.name)) return {c_.file.references[*r].method, c_.file.references[*r].threshold};
    if (c_.file.default_method) return {*c_.file.default_method, c_.file.default_threshold};
    if (arg.type.is_float()) return {ValidationMethod::side_by_side_relative, 1e-4};
    return {ValidationMethod::side_by_side, 0};
  }

  void fill(HostBuffer& b, const Fill& f, const std::optional<expr::Expression>& generator, const Problem& p,
            std::uint64_t derived_seed, const std::string& what) const {
    switch (f.type) {
      case FillType::constant:
        fill_constant(b, f.value);
        break;
      case FillType::random:
        fill_random(b, f.value, f.seed.value_or(derived_seed));
        break;
      case FillType::generator:
        fill_generator(b, *generator, c_.size_bindings(p.n), c_.file.path, what + ".DataSource");
        break;
      case FillType::binary_raw:
        fill_binary(b, f.data_source, c_.file.path, what + ".DataSource");
        break;
    }
  }

  CompiledFile c_;
  std::vector<std::size_t> vector_index_;  // argument index of each vector argument
  std::vector<std::size_t> written_;       // argument index of each written vector argument
  std::string description_;
};

std::size_t parse_count(std::string_view s, std::string_view whole, const std::string& file, std::string_view syntax) {
  std::size_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v == 0)
    throw UsageError(fmt::format("{}: --size '{}': '{}' is not a positive integer; write {}", file, whole, s, syntax));
  return v;
}

Problem DescribedKernel::parse_size(std::string_view text) const {
  const std::vector<std::size_t> numbers = bindable();
  if (numbers.empty() && c_.file.size_variables.empty()) return fixed_size(text);
  std::vector<std::size_t> n = c_.default_numbers();
  const std::size_t ps = c_.file.problem_size.size();
  const std::string syntax(size_syntax());
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto comma = text.find(',', pos);
    const std::string_view part =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (part.empty())
      throw UsageError(fmt::format("{}: --size '{}' has an empty part; write {}", c_.file.path, text, syntax));
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      std::vector<std::size_t> dims;
      for (std::size_t p = 0; p <= part.size();) {
        const auto x = part.find('x', p);
        dims.push_back(parse_count(part.substr(p, x == std::string_view::npos ? std::string_view::npos : x - p), text,
                                   c_.file.path, syntax));
        p = x == std::string_view::npos ? part.size() + 1 : x + 1;
      }
      if (dims.size() != numbers.size())
        throw UsageError(fmt::format(
            "{}: --size '{}' gives {} problem size(s) but ProblemSize has {}{}; write {}", c_.file.path, text,
            dims.size(), numbers.size(),
            numbers.size() == ps ? "" : " (entries that are expressions of the tuning parameters are not bound)",
            syntax));
      for (std::size_t k = 0; k < numbers.size(); ++k) n[numbers[k]] = dims[k];
      continue;
    }
    const std::string_view key = part.substr(0, eq);
    const std::size_t value = parse_count(part.substr(eq + 1), text, c_.file.path, syntax);
    bool bound = false;
    for (const std::size_t k : numbers)
      if (!bound && key == fmt::format("ProblemSize[{}]", k)) n[k] = value, bound = true;
    for (std::size_t k = 0; k < c_.file.size_variables.size() && !bound; ++k)
      if (key == c_.file.size_variables[k].first) n[ps + k] = value, bound = true;
    if (!bound) {
      std::string names;
      for (const std::size_t k : numbers) names += fmt::format("{}ProblemSize[{}]", names.empty() ? "" : ", ", k);
      for (const auto& [v, d] : c_.file.size_variables) names += (names.empty() ? "" : ", ") + v;
      throw UsageError(fmt::format("{}: --size '{}': '{}' is not a size of this file; use {}", c_.file.path, text, key,
                                   names.empty() ? std::string("none (the file has no sizes)") : names));
    }
  }
  Problem p = problem_of(std::move(n));
  // The new sizes must give valid buffers.
  for (std::size_t a = 0; a < c_.file.arguments.size(); ++a)
    if (c_.file.arguments[a].kind == ArgumentKind::vector) (void)c_.buffer_elements(a, p.n);
  return p;
}

}  // namespace
}  // namespace t1

std::shared_ptr<const KernelSpec> load_tuning_file(const std::string& path) {
  return std::make_shared<const t1::DescribedKernel>(t1::compile_tuning_file(path));
}

TuningFile read_tuning_file(const std::string& path) {
  return t1::compile_tuning_file(path).file;
}

const TuningFile* tuning_file_of(const KernelSpec& spec) {
  const auto* d = dynamic_cast<const t1::DescribedKernel*>(&spec);
  return d ? &d->file() : nullptr;
}

}  // namespace wstune
