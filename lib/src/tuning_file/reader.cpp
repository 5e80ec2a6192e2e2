// The T1 tuning-file reader: parses and validates a whole file, naming the
// JSON path and the fix of anything wrong (tuning_file.hpp, docs/tuning-files.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <sstream>

#include <fmt/format.h>

#include "tuning_file/compiled.hpp"
#include "tuning_file/signature.hpp"
#include "wstune/error.hpp"

namespace wstune::t1 {

namespace fs = std::filesystem;
using nlohmann::json;

void fail(const std::string& file, std::string_view json_path, const std::string& what) {
  throw UsageError(json_path.empty() ? fmt::format("{}: {}", file, what)
                                     : fmt::format("{}: {}: {}", file, json_path, what));
}

namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;
constexpr int kMaxDepth = 64;

std::string read_text(const std::string& path, const std::string& what_for, std::size_t max_bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw UsageError(fmt::format("{} {} does not exist or is not a file; check the path", what_for, path));
  }
  if (fs::file_size(path, ec) > max_bytes) {
    throw UsageError(
        fmt::format("{} {} is larger than {} MiB; is it the right file?", what_for, path, max_bytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) throw UsageError(fmt::format("cannot read {} {}", what_for, path));
  return ss.str();
}

json parse_json(const std::string& path, const std::string& text) {
  // A depth bound first: nlohmann's parser and dump recurse per level.
  int depth = 0, max = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      max = std::max(max, ++depth);
    else if (c == ']' || c == '}')
      --depth;
  }
  if (max > kMaxDepth) {
    fail(path, "",
         fmt::format("JSON nested {} levels deep (at most {}); a tuning file is a few levels deep — is "
                     "it the right file?",
                     max, kMaxDepth));
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail(path, "", fmt::format("not valid JSON (byte {}): {}", e.byte, e.what()));
  } catch (const json::exception& e) {  // a number beyond a double (1e309): fuzz/regressions/tuning_file
    fail(path, "", fmt::format("not a value wstune can read: {}", e.what()));
  }
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// True when the expression reads LocalSize (a Local size that follows the group shape).
bool reads_local_size(const expr::Expression& e) {
  const auto ns = e.names();
  return std::find(ns.begin(), ns.end(), "LocalSize") != ns.end();
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    c_.file.path = path;
    doc_ = parse_json(path, read_text(path, "tuning file", kMaxFileBytes));
    if (!doc_.is_object())
      fail(path_, "",
           "the top level is not a JSON object; a T1 file is {\"ConfigurationSpace\": ..., \"KernelSpecification\": "
           "...}");
  }

  CompiledFile run() {
    const json& ks = object(doc_, "KernelSpecification", true);
    language(ks);
    extension();
    problem_size(ks);
    kernel_source(ks);
    parameters();
    problem_size_expressions();
    conditions();
    ndrange(ks);
    arguments(ks);
    references();
    budget();
    search();
    device(ks);
    check_signature(ks);
    split();
    reference_configuration();
    check_sizes();
    return std::move(c_);
  }

 private:
  // ---- access helpers ---------------------------------------------------------

  const json& object(const json& parent, const char* key, bool required, const std::string& at = "") {
    const std::string p = at.empty() ? key : at + "." + key;
    if (!parent.contains(key)) {
      if (required) fail(path_, p, "missing; T1 requires it (see docs/tuning-files.md)");
      static const json empty = json::object();
      return empty;
    }
    const json& j = parent.at(key);
    if (!j.is_object()) fail(path_, p, fmt::format("is {}, not an object", j.type_name()));
    return j;
  }

  std::string string(const json& parent, const char* key, const std::string& at, bool required = true) {
    const std::string p = at + "." + key;
    if (!parent.contains(key)) {
      if (required) fail(path_, p, "missing; T1 requires it");
      return {};
    }
    const json& j = parent.at(key);
    if (!j.is_string()) fail(path_, p, fmt::format("is {}, not a string", j.type_name()));
    return j.get<std::string>();
  }

  const json& array(const json& parent, const char* key, const std::string& at, bool required = false) {
    static const json empty = json::array();
    if (!parent.contains(key)) {
      if (required) fail(path_, at + "." + key, "missing; T1 requires it");
      return empty;
    }
    const json& j = parent.at(key);
    if (!j.is_array()) fail(path_, at + "." + key, fmt::format("is {}, not an array", j.type_name()));
    return j;
  }

  double number(const json& parent, const char* key, const std::string& at, double fallback) {
    if (!parent.contains(key)) return fallback;
    const json& j = parent.at(key);
    if (!j.is_number()) fail(path_, at + "." + key, fmt::format("is {}, not a number", j.type_name()));
    return j.get<double>();
  }

  // An expression from a string (or a number, written as one).
  expr::Expression parse(const json& node, const std::string& at, const std::set<std::string>& allowed,
                         const std::string& allowed_what) {
    std::string text;
    if (node.is_string())
      text = node.get<std::string>();
    else if (node.is_number_integer())
      text = node.dump();
    else
      fail(path_, at, fmt::format("is {}, not an expression string", node.type_name()));
    std::optional<expr::Expression> parsed;
    try {
      parsed = expr::Expression::parse(text);
    } catch (const expr::ExprError& err) {
      fail(path_, at, err.what());
    }
    const expr::Expression& e = *parsed;
    for (const std::string& n : e.names()) {
      if (!allowed.count(n) && !allowed.count("*")) {
        fail(path_, at,
             fmt::format("'{}' names '{}', which is not {}; use one of: {}", text, n, allowed_what,
                         allowed.empty() ? std::string("(none)") : join(allowed)));
      }
    }
    return e;
  }

  std::set<std::string> size_names() const {
    std::set<std::string> s;
    if (!c_.file.problem_size.empty()) s.insert("ProblemSize");
    for (const auto& [n, v] : c_.file.size_variables) s.insert(n);
    return s;
  }
  std::set<std::string> config_names() const {
    auto s = size_names();
    for (const auto& p : c_.file.parameters) s.insert(p.name);
    return s;
  }

  // ---- sections ---------------------------------------------------------------

  void language(const json& ks) {
    const std::string lang = string(ks, "Language", "KernelSpecification");
    if (lang != "OpenCL") {
      fail(path_, "KernelSpecification.Language",
           fmt::format("is '{}'; wstune tunes OpenCL kernels only (CUDA, Vulkan and Hypertuner files are for other "
                       "tools): write the kernel in OpenCL C and set \"Language\": \"OpenCL\"",
                       lang));
    }
  }

  void extension() {
    const json& w = object(doc_, "wstune", false);
    static const std::set<std::string> known{"Priority",     "LocalSize",     "GuardsBounds", "ReferenceConfiguration",
                                             "Sizes",        "Validation",    "Split",        "OpsPerWorkItem",
                                             "ScalarValues", "ArgumentSizes", "Metrics"};
    for (const auto& [k, v] : w.items())
      if (!known.count(k))
        fail(path_, "wstune." + k, fmt::format("unknown wstune setting; use one of: {}", join(known)));
    if (w.contains("Priority")) {
      const std::string p = string(w, "Priority", "wstune");
      if (p == "x")
        c_.file.priority = Priority::x;
      else if (p == "y")
        c_.file.priority = Priority::y;
      else if (p != "none")
        fail(path_, "wstune.Priority", fmt::format("is '{}'; use \"x\", \"y\" or \"none\"", p));
    }
    if (w.contains("LocalSize")) {
      const json& l = w.at("LocalSize");
      if (!(l.is_string() && l.get<std::string>() == "search"))
        fail(path_, "wstune.LocalSize",
             "use \"search\" (search the group shapes for each parameter set) or leave it out");
      c_.file.search_local = true;
    }
    if (w.contains("GuardsBounds")) {
      if (!w.at("GuardsBounds").is_boolean()) fail(path_, "wstune.GuardsBounds", "is not true or false");
      c_.file.guards_bounds = w.at("GuardsBounds").get<bool>();
    }
    for (const auto& [name, v] : object(w, "Sizes", false, "wstune").items()) {
      if (!is_identifier(name) || name == "ProblemSize" || name == "LocalSize" || name == "i")
        fail(path_, "wstune.Sizes." + name,
             "is not a usable name; use an identifier other than ProblemSize, LocalSize, i");
      if (!v.is_number_unsigned() || v.get<std::size_t>() == 0)
        fail(path_, "wstune.Sizes." + name, "is not a positive integer (its default value)");
      c_.file.size_variables.emplace_back(name, v.get<std::size_t>());
    }
    const json& val = object(w, "Validation", false, "wstune");
    if (!val.empty()) {
      c_.file.default_method = validation_method(val, "wstune.Validation");
      c_.file.default_threshold = number(val, "Threshold", "wstune.Validation", 1e-4);
    }
    if (w.contains("Split")) c_.file.split = w.at("Split");
  }

  // ProblemSize: a list of 1–3 entries, or one entry (Kernel Tuner reads both),
  // each a positive integer or an expression; an expression without names is
  // a number, one that names tuning parameters is parsed once they are read
  // (problem_size_expressions()).
  void problem_size(const json& ks) {
    if (!ks.contains("ProblemSize")) return;
    const json& node = ks.at("ProblemSize");
    const json ps = node.is_array() ? node : json::array({node});
    if (ps.empty() || ps.size() > 3)
      fail(path_, "KernelSpecification.ProblemSize",
           "has no entry or more than 3; give 1 to 3 sizes, e.g. [4096, 4096]");
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::string at = fmt::format("KernelSpecification.ProblemSize[{}]", i);
      std::size_t value = 0;
      std::string text;
      if (ps[i].is_number_unsigned() && ps[i].get<std::size_t>() > 0) {
        value = ps[i].get<std::size_t>();
      } else if (ps[i].is_string()) {
        const expr::Expression e = parse(ps[i], at, {"*"}, "");
        if (e.names().empty())
          value = positive_size(e, Bindings{}, path_, at);
        else
          text = e.text();
      } else {
        fail(path_, at,
             "is not a positive integer or an expression of the tuning parameters, e.g. 4096 or "
             "\"num_blocks*block_size_x\"");
      }
      c_.file.problem_size.push_back(value);
      c_.file.problem_size_expressions.push_back(text);
    }
  }

  // ProblemSize entries that name tuning parameters: their expressions, of
  // the parameters and the wstune.Sizes variables.
  void problem_size_expressions() {
    std::set<std::string> names;
    for (const auto& p : c_.file.parameters) names.insert(p.name);
    for (const auto& [n, v] : c_.file.size_variables) names.insert(n);
    for (std::size_t i = 0; i < c_.file.problem_size_expressions.size(); ++i) {
      const std::string& text = c_.file.problem_size_expressions[i];
      if (text.empty()) {
        c_.problem_size_exprs.emplace_back();
        continue;
      }
      c_.problem_size_exprs.push_back(parse(json(text), fmt::format("KernelSpecification.ProblemSize[{}]", i), names,
                                            "a tuning parameter or a wstune.Sizes variable"));
    }
  }

  void kernel_source(const json& ks) {
    c_.file.kernel_name = string(ks, "KernelName", "KernelSpecification");
    if (!is_identifier(c_.file.kernel_name))
      fail(path_, "KernelSpecification.KernelName",
           fmt::format("'{}' is not an OpenCL C identifier", c_.file.kernel_name));
    const std::string rel = string(ks, "KernelFile", "KernelSpecification");
    const fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(path_).parent_path() / rel;
    c_.file.kernel_file = p.lexically_normal().string();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      fail(path_, "KernelSpecification.KernelFile",
           fmt::format("'{}' does not exist (looked for {}, relative to the tuning file)", rel, c_.file.kernel_file));
    }
    c_.file.source = read_text(c_.file.kernel_file, "kernel file", kMaxFileBytes);
    const json& co = array(ks, "CompilerOptions", "KernelSpecification");
    for (std::size_t i = 0; i < co.size(); ++i) {
      if (!co[i].is_string()) fail(path_, fmt::format("KernelSpecification.CompilerOptions[{}]", i), "is not a string");
      if (!co[i].get<std::string>().empty()) c_.file.compiler_options.push_back(co[i].get<std::string>());
    }
  }

  void parameters() {
    const json& cs = object(doc_, "ConfigurationSpace", true);
    const json& tps = array(cs, "TuningParameters", "ConfigurationSpace", true);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < tps.size(); ++i) {
      const std::string at = fmt::format("ConfigurationSpace.TuningParameters[{}]", i);
      if (!tps[i].is_object()) fail(path_, at, "is not an object with Name, Type and Values");
      TuningParameter p;
      p.name = string(tps[i], "Name", at);
      if (!is_identifier(p.name) || p.name == "ProblemSize" || p.name == "LocalSize" || p.name == "i")
        fail(path_, at + ".Name", fmt::format("'{}' is not usable as a -D name; use a C identifier", p.name));
      if (!seen.insert(p.name).second) fail(path_, at + ".Name", fmt::format("'{}' is declared twice", p.name));
      for (const auto& [n, v] : c_.file.size_variables)
        if (n == p.name) fail(path_, at + ".Name", fmt::format("'{}' is also a wstune.Sizes variable", p.name));
      p.type = string(tps[i], "Type", at);
      if (p.type == "double") p.type = "float";  // KTT reads "double" as "float"
      static const std::set<std::string> types{"int", "uint", "float", "bool", "string"};
      if (!types.count(p.type))
        fail(path_, at + ".Type", fmt::format("'{}' is not a T1 type; use {}", p.type, join(types)));
      if (!tps[i].contains("Values")) fail(path_, at + ".Values", "missing; give the values, e.g. \"[16, 32, 64]\"");
      p.values = values_of(tps[i].at("Values"), at + ".Values", p.type);
      if (p.values.empty()) fail(path_, at + ".Values", "gives no values; a parameter needs at least one");
      // A Default that is not one of the Values names no value (Kernel Tuner
      // does not read Default at all): the parameter is free in the search
      // for the reference configuration.
      std::optional<json> d;
      if (tps[i].contains("Default")) {
        json v = tps[i].at("Default");
        if (p.type == "float" && v.is_number()) v = v.get<double>();
        if (std::find(p.values.begin(), p.values.end(), v) != p.values.end()) d = std::move(v);
      }
      c_.file.defaults.push_back(std::move(d));
      c_.file.parameters.push_back(std::move(p));
    }
  }

  std::vector<json> values_of(const json& node, const std::string& at, const std::string& type) {
    expr::Value list;
    if (node.is_array()) {  // a JSON list is accepted as well as T1's expression string
      std::vector<expr::Value> vs;
      for (const auto& v : node) {
        if (!(v.is_number() || v.is_boolean() || v.is_string()))
          fail(path_, at, "holds a value that is not a number, bool or string");
        vs.push_back(to_value(v));
      }
      list = expr::Value(std::move(vs));
    } else {
      // Python's tuple "(16, 32)" (Kernel Tuner's literal_eval and KTT's
      // Python read it) as the list "[16, 32]": the expressions have no tuples.
      json text = node;
      if (node.is_string()) {
        const std::string t = node.get<std::string>();
        const auto a = t.find_first_not_of(" \t\n"), b = t.find_last_not_of(" \t\n");
        if (a != std::string::npos && t[a] == '(' && t[b] == ')' && t.find(',') != std::string::npos) {
          try {
            (void)expr::Expression::parse(t);
          } catch (const expr::ExprError&) {
            text = "[" + t.substr(a + 1, b - a - 1) + "]";
          }
        }
      }
      const expr::Expression e = parse(text, at, {}, "defined (Values are constants)");
      try {
        list = e.eval(Bindings{});
      } catch (const expr::ExprError& err) {
        fail(path_, at, err.what());
      }
    }
    if (list.kind() != expr::Value::Kind::list)
      fail(path_, at, fmt::format("gives {}, not a list; write e.g. \"[16, 32, 64]\"", list.repr()));
    std::vector<json> out;
    for (const expr::Value& v : list.as_list()) {
      const auto k = v.kind();
      const bool ok = (type == "int" && k == expr::Value::Kind::integer) ||
                      (type == "uint" && k == expr::Value::Kind::integer && v.as_int() >= 0) ||
                      (type == "float" && v.is_number() && k != expr::Value::Kind::boolean) ||
                      (type == "bool" && k == expr::Value::Kind::boolean) ||
                      (type == "string" && k == expr::Value::Kind::string);
      if (!ok) fail(path_, at, fmt::format("{} is not a value of type {}", v.repr(), type));
      if (k == expr::Value::Kind::string && std::any_of(v.as_string().begin(), v.as_string().end(), [](char c) {
            return std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'';
          }))
        fail(path_, at,
             fmt::format("{} has blanks or quotes; it is passed as -D NAME=VALUE, so use a single token", v.repr()));
      json j = type == "float" ? json(v.as_double()) : to_json_value(v);
      if (std::find(out.begin(), out.end(), j) != out.end())
        fail(path_, at, fmt::format("{} is given twice", v.repr()));
      out.push_back(std::move(j));
    }
    return out;
  }

  void conditions() {
    const json& cs = doc_.at("ConfigurationSpace");
    const json& conds = array(cs, "Conditions", "ConfigurationSpace");
    std::set<std::string> params;
    for (const auto& p : c_.file.parameters) params.insert(p.name);
    for (std::size_t i = 0; i < conds.size(); ++i) {
      const std::string at = fmt::format("ConfigurationSpace.Conditions[{}]", i);
      if (!conds[i].is_object() || !conds[i].contains("Expression"))
        fail(path_, at, "needs an Expression (and Parameters)");
      // Parameters lists the names the Expression reads (KTT binds only
      // those); the Expression itself is checked below, so a stale entry is
      // not an error (Kernel Tuner does not read Parameters).
      const json& ps = array(conds[i], "Parameters", at);
      for (std::size_t k = 0; k < ps.size(); ++k)
        if (!ps[k].is_string())
          fail(path_, fmt::format("{}.Parameters[{}]", at, k), fmt::format("{} is not a name", ps[k].dump()));
      (void)params;
      c_.conditions.push_back(parse(conds[i].at("Expression"), at + ".Expression", config_names(),
                                    "a tuning parameter, ProblemSize or a wstune.Sizes variable"));
      c_.file.conditions.push_back(conds[i].at("Expression").is_string() ? conds[i].at("Expression").get<std::string>()
                                                                         : conds[i].at("Expression").dump());
    }
  }

  void ndrange(const json& ks) {
    global_size_type(ks);
    if (ks.contains("GridDivX") || ks.contains("GridDivY") || ks.contains("GridDivZ")) return grid_div(ks);
    static constexpr const char* axes[3] = {"X", "Y", "Z"};
    const json& g = object(ks, "GlobalSize", true, "KernelSpecification");
    if (!g.contains("X"))
      fail(path_, "KernelSpecification.GlobalSize.X", "missing; give the NDRange, e.g. \"ProblemSize[0]\"");
    if (g.contains("Z") && !g.contains("Y")) fail(path_, "KernelSpecification.GlobalSize", "has Z but no Y");
    // A "1" in Y or Z is one work-item (Kernel Tuner writes all three); trailing ones do not add dimensions.
    c_.file.dims = 1;
    for (unsigned d = 1; d < 3; ++d)
      if (g.contains(axes[d]) && !(g.at(axes[d]).is_string() && g.at(axes[d]).get<std::string>() == "1") &&
          !(g.at(axes[d]).is_number() && g.at(axes[d]).get<double>() == 1))
        c_.file.dims = d + 1;
    const auto names = config_names();
    for (unsigned d = 0; d < 3; ++d) {
      const std::string at = std::string("KernelSpecification.GlobalSize.") + axes[d];
      if (d < c_.file.dims) {
        c_.global[d] = parse(g.at(axes[d]), at, names, "a tuning parameter, ProblemSize or a wstune.Sizes variable");
        c_.file.global[d] = c_.global[d]->text();
      } else {
        c_.file.global[d] = "1";
      }
    }
    if (c_.file.search_local) {
      if (c_.file.global_size_type == GlobalSizeType::cuda)
        fail(path_, "KernelSpecification.GlobalSizeType",
             "is CUDA (GlobalSize counts work-groups of LocalSize), but wstune.LocalSize is \"search\"; give "
             "GlobalSize in work-items (GlobalSizeType OpenCL) or leave wstune.LocalSize out");
      for (auto& l : c_.file.local) l = "search";
      return;
    }
    const json& l = object(ks, "LocalSize", true, "KernelSpecification");
    for (unsigned d = 0; d < 3; ++d) {
      const std::string at = std::string("KernelSpecification.LocalSize.") + axes[d];
      if (d < c_.file.dims) {
        if (!l.contains(axes[d]))
          fail(path_, at, "missing; the NDRange has this dimension (or set wstune.LocalSize \"search\")");
        c_.local[d] = parse(l.at(axes[d]), at, names, "a tuning parameter, ProblemSize or a wstune.Sizes variable");
        c_.file.local[d] = c_.local[d]->text();
      } else {
        c_.file.local[d] = "1";
      }
    }
  }

  // GlobalSizeType: OpenCL (work-items; the default) or CUDA/Vulkan
  // (work-groups), KTT's meaning.
  void global_size_type(const json& ks) {
    if (!ks.contains("GlobalSizeType")) return;
    const std::string t = string(ks, "GlobalSizeType", "KernelSpecification");
    if (t == "CUDA" || t == "Vulkan")
      c_.file.global_size_type = GlobalSizeType::cuda;
    else if (t != "OpenCL")
      fail(path_, "KernelSpecification.GlobalSizeType",
           fmt::format("'{}' is not OpenCL (GlobalSize in work-items), CUDA or Vulkan (GlobalSize in work-groups)", t));
  }

  // Kernel Tuner's grid (GridDivX/Y/Z present): ceil(ProblemSize[d] / Π
  // GridDiv[d]) work-groups of LocalSize[d]; GlobalSize is not read, as in
  // Kernel Tuner. A dimension without GridDiv divides by its
  // block_size_x/y/z parameter (1 without it); a dimension beyond
  // ProblemSize's entries is one work-group, whatever its GridDiv names.
  void grid_div(const json& ks) {
    static constexpr const char* axes[3] = {"X", "Y", "Z"};
    static constexpr const char* blocks[3] = {"block_size_x", "block_size_y", "block_size_z"};
    c_.file.grid_div = true;
    const std::size_t ps = c_.file.problem_size.size();
    if (ps == 0)
      fail(path_, "KernelSpecification.GridDivX",
           "divides ProblemSize, which the file does not give; add ProblemSize (Kernel Tuner's grid is "
           "ceil(ProblemSize / GridDiv)) or write GlobalSize without GridDiv");
    if (c_.file.search_local)
      fail(path_, "wstune.LocalSize",
           "is \"search\", but GridDiv counts work-groups of LocalSize; leave wstune.LocalSize out or write "
           "GlobalSize in work-items without GridDiv");
    const json& l = object(ks, "LocalSize", false, "KernelSpecification");
    auto is_one = [](const json& v) {
      return (v.is_string() && v.get<std::string>() == "1") || (v.is_number() && v.get<double>() == 1);
    };
    auto has_param = [&](const std::string& n) {
      return std::any_of(c_.file.parameters.begin(), c_.file.parameters.end(),
                         [&](const TuningParameter& p) { return p.name == n; });
    };
    c_.file.dims = static_cast<unsigned>(ps);
    for (unsigned d = 1; d < 3; ++d)
      if (l.contains(axes[d]) && !is_one(l.at(axes[d]))) c_.file.dims = std::max(c_.file.dims, d + 1);
    const auto names = config_names();
    const std::string what = "a tuning parameter, ProblemSize or a wstune.Sizes variable";
    for (unsigned d = 0; d < 3; ++d) {
      c_.file.global[d] = "";
      if (d >= c_.file.dims) {
        c_.file.local[d] = "1";
        continue;
      }
      // LocalSize, else Kernel Tuner's block_size_x/y/z (256, 1, 1 without them).
      const std::string at = std::string("KernelSpecification.LocalSize.") + axes[d];
      const json fallback = has_param(blocks[d]) ? json(blocks[d]) : json(d == 0 ? "256" : "1");
      c_.local[d] = parse(l.contains(axes[d]) ? l.at(axes[d]) : fallback, at, names, what);
      c_.file.local[d] = c_.local[d]->text();
      if (d >= ps) continue;
      const std::string key = std::string("GridDiv") + axes[d];
      const json div = ks.contains(key) ? ks.at(key) : json();
      const json list = div.is_array() ? div : div.is_null() ? json::array() : json::array({div});
      for (std::size_t k = 0; k < list.size(); ++k) {
        c_.grid_divisors[d].push_back(parse(list[k], fmt::format("KernelSpecification.{}[{}]", key, k), names, what));
        c_.file.grid_divisors[d].push_back(c_.grid_divisors[d].back().text());
      }
      if (list.empty() && has_param(blocks[d])) {  // Kernel Tuner's default divisor
        c_.grid_divisors[d].push_back(expr::Expression::parse(blocks[d]));
        c_.file.grid_divisors[d].push_back(blocks[d]);
      }
    }
  }

  Fill fill_of(const json& a, const std::string& at, const ElementType& type, bool reference) {
    Fill f;
    const std::string t = a.contains("FillType") ? string(a, "FillType", at) : std::string("Constant");
    if (t == "Constant")
      f.type = FillType::constant;
    else if (t == "Random")
      f.type = FillType::random;
    else if (t == "Generator")
      f.type = FillType::generator;
    else if (t == "BinaryRaw")
      f.type = FillType::binary_raw;
    else
      fail(
          path_, at + ".FillType",
          fmt::format(
              "'{}' is not supported; use Constant, Random, Generator or BinaryRaw (Script and BinaryHDF are not)", t));
    f.value = number(a, "FillValue", at, f.type == FillType::random ? 1.0 : 0.0);
    if (a.contains("RandomSeed")) {
      if (!a.at("RandomSeed").is_number_unsigned()) fail(path_, at + ".RandomSeed", "is not a non-negative integer");
      f.seed = a.at("RandomSeed").get<std::uint64_t>();
    }
    if (f.type == FillType::generator) {
      if (!a.contains("DataSource"))
        fail(path_, at + ".DataSource", "missing; a Generator's DataSource is an expression of i, e.g. \"i % 7\"");
      auto names = size_names();
      names.insert("i");
      generator_ = parse(a.at("DataSource"), at + ".DataSource", names, "i, ProblemSize or a wstune.Sizes variable");
      f.expression = generator_->text();
    } else if (f.type == FillType::binary_raw) {
      const std::string rel = string(a, "DataSource", at);
      const fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(path_).parent_path() / rel;
      f.data_source = p.lexically_normal().string();
      std::error_code ec;
      if (!fs::is_regular_file(p, ec))
        fail(path_, at + ".DataSource", fmt::format("'{}' does not exist (looked for {})", rel, f.data_source));
    }
    (void)type;
    (void)reference;
    return f;
  }

  // KernelSpecification.Arguments, kernel order; then every wstune.ScalarValues
  // entry must name a Scalar, and every Vector size must evaluate.
  void arguments(const json& ks) {
    const json& args = array(ks, "Arguments", "KernelSpecification");
    std::set<std::string> names;
    for (std::size_t i = 0; i < args.size(); ++i) argument(args[i], i, names);
    for (const auto& [name, v] : scalar_values().items())
      if (!std::any_of(c_.file.arguments.begin(), c_.file.arguments.end(), [&, n = name](const TuningFileArgument& x) {
            return x.name == n && x.kind == ArgumentKind::scalar;
          }))
        fail(path_, "wstune.ScalarValues." + name, "is not a Scalar argument's Name");
    for (const auto& [name, v] : argument_sizes().items())
      if (!std::any_of(c_.file.arguments.begin(), c_.file.arguments.end(), [&, n = name](const TuningFileArgument& x) {
            return x.name == n && x.kind == ArgumentKind::vector;
          }))
        fail(path_, "wstune.ArgumentSizes." + name, "is not a Vector argument's Name");
  }

  // Once the reference configuration is known: every Vector size evaluates
  // with the file's own sizes, and every BinaryRaw reference has the bytes
  // its buffer needs.
  void check_sizes() {
    const auto n = c_.default_numbers();
    for (std::size_t i = 0; i < c_.file.arguments.size(); ++i)
      if (c_.file.arguments[i].kind == ArgumentKind::vector) (void)c_.buffer_elements(i, n);
    for (std::size_t i = 0; i < c_.file.references.size(); ++i) {
      const TuningFileReference& r = c_.file.references[i];
      if (r.fill.type != FillType::binary_raw) continue;
      const auto it = std::find_if(c_.file.arguments.begin(), c_.file.arguments.end(),
                                   [&](const TuningFileArgument& a) { return a.name == r.target; });
      const auto a = static_cast<std::size_t>(it - c_.file.arguments.begin());
      const std::uintmax_t want = c_.buffer_elements(a, n) * it->type.bytes();
      std::error_code ec;
      const auto have = fs::file_size(r.fill.data_source, ec);
      if (have != want)
        fail(path_, fmt::format("KernelSpecification.ReferenceArguments[{}].DataSource", i),
             fmt::format("{} has {} bytes, but {} ({} elements of {}) needs {}", r.fill.data_source, have, r.target,
                         c_.buffer_elements(a, n), it->type.name(), want));
    }
  }

  // Arguments[i] (`names`: the names so far): the argument and its expressions
  // (size, generator, wstune.ScalarValues), appended to the file.
  void argument(const json& a, std::size_t i, std::set<std::string>& names) {
    const std::string at = fmt::format("KernelSpecification.Arguments[{}]", i);
    if (!a.is_object()) fail(path_, at, "is not an object");
    TuningFileArgument arg = declaration(a, at, i, names);
    generator_.reset();
    std::optional<expr::Expression> size, scalar;
    if (arg.kind == ArgumentKind::scalar)
      scalar = scalar_argument(a, at, arg);
    else
      size = sized_argument(a, at, arg);
    c_.sizes.push_back(size);
    c_.generators.push_back(generator_);
    c_.scalar_values.push_back(scalar);
    c_.local_depends_on_local_size.push_back(size && reads_local_size(*size));
    c_.file.arguments.push_back(std::move(arg));
  }

  // An argument's Name (argN when absent; unique), Type, MemoryType and AccessType.
  TuningFileArgument declaration(const json& a, const std::string& at, std::size_t i, std::set<std::string>& names) {
    TuningFileArgument arg;
    arg.name = a.contains("Name") ? string(a, "Name", at) : fmt::format("arg{}", i);
    if (!names.insert(arg.name).second) fail(path_, at + ".Name", fmt::format("'{}' is used twice", arg.name));
    const std::string type = string(a, "Type", at);
    try {
      arg.type = parse_element_type(type);
    } catch (const std::invalid_argument& e) {
      fail(path_, at + ".Type", e.what());
    }
    const std::string mem = string(a, "MemoryType", at);
    if (mem == "Scalar")
      arg.kind = ArgumentKind::scalar;
    else if (mem == "Vector")
      arg.kind = ArgumentKind::vector;
    else if (mem == "Local")
      arg.kind = ArgumentKind::local;
    else
      fail(path_, at + ".MemoryType", fmt::format("'{}' is not supported; use Scalar, Vector or Local", mem));
    if (a.contains("AccessType")) {
      const std::string acc = string(a, "AccessType", at);
      if (acc == "ReadOnly")
        arg.access = Access::read_only;
      else if (acc == "WriteOnly")
        arg.access = Access::write_only;
      else if (acc == "ReadWrite")
        arg.access = Access::read_write;
      else
        fail(path_, at + ".AccessType", fmt::format("'{}' is not ReadOnly, WriteOnly or ReadWrite", acc));
    }
    return arg;
  }

  // A Scalar's FillValue (FillType Constant), and wstune.ScalarValues' expression for it if any.
  std::optional<expr::Expression> scalar_argument(const json& a, const std::string& at, TuningFileArgument& arg) {
    if (a.contains("FillType") && string(a, "FillType", at) != "Constant")
      fail(path_, at + ".FillType", "a Scalar takes its FillValue (FillType Constant)");
    if (!a.contains("FillValue")) fail(path_, at + ".FillValue", "missing; a Scalar needs its value");
    arg.fill.value = number(a, "FillValue", at, 0);
    const json& sv = scalar_values();
    if (!sv.contains(arg.name)) return std::nullopt;
    expr::Expression scalar = parse(sv.at(arg.name), "wstune.ScalarValues." + arg.name, config_names(),
                                    "a tuning parameter, ProblemSize or a wstune.Sizes variable");
    arg.value_expression = scalar.text();
    return scalar;
  }

  // A Vector's or Local's Size (a Local's may read LocalSize; a Vector's may
  // be wstune.ArgumentSizes' instead), and a Vector's fill.
  expr::Expression sized_argument(const json& a, const std::string& at, TuningFileArgument& arg) {
    const bool local = arg.kind == ArgumentKind::local;
    const bool extension = !local && argument_sizes().contains(arg.name);
    if (!a.contains("Size") && !extension)
      fail(path_, at + ".Size", "missing; give the element count, e.g. \"ProblemSize[0] * ProblemSize[1]\"");
    auto allowed = config_names();
    if (local) allowed.insert("LocalSize");
    const char* what = local
                           ? "a tuning parameter, LocalSize, ProblemSize or a wstune.Sizes variable"
                           : "a tuning parameter (bound to its list of values), ProblemSize or a wstune.Sizes variable";
    if (a.contains("Size")) (void)parse(a.at("Size"), at + ".Size", allowed, what);  // valid T1 either way
    expr::Expression size =
        extension ? parse(argument_sizes().at(arg.name), "wstune.ArgumentSizes." + arg.name, allowed, what)
                  : parse(a.at("Size"), at + ".Size", allowed, what);
    arg.size = size.text();
    arg.size_from_extension = extension;
    if (arg.kind == ArgumentKind::vector) arg.fill = fill_of(a, at, arg.type, false);
    return size;
  }

  // wstune.ScalarValues (empty when absent).
  const json& scalar_values() { return object(object(doc_, "wstune", false), "ScalarValues", false, "wstune"); }
  // wstune.ArgumentSizes (empty when absent).
  const json& argument_sizes() { return object(object(doc_, "wstune", false), "ArgumentSizes", false, "wstune"); }

  std::optional<ValidationMethod> validation_method(const json& r, const std::string& at) {
    if (!r.contains("ValidationMethod") && !r.contains("Method")) return std::nullopt;
    const std::string m = r.contains("ValidationMethod") ? string(r, "ValidationMethod", at) : string(r, "Method", at);
    if (m == "AbsoluteDifference") return ValidationMethod::absolute_difference;
    if (m == "SideBySideComparison") return ValidationMethod::side_by_side;
    if (m == "SideBySideRelativeComparison") return ValidationMethod::side_by_side_relative;
    if (m == "SumRelativeComparison" && at == "wstune.Validation") return ValidationMethod::sum_relative;
    fail(path_, at + (r.contains("ValidationMethod") ? ".ValidationMethod" : ".Method"),
         fmt::format("'{}' is not AbsoluteDifference, SideBySideComparison or SideBySideRelativeComparison{}", m,
                     at == "wstune.Validation" ? " (or wstune's SumRelativeComparison)" : ""));
  }

  void references() {
    const json& ks = doc_.at("KernelSpecification");
    const json& refs = array(ks, "ReferenceArguments", "KernelSpecification");
    std::set<std::string> targets;
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const std::string at = fmt::format("KernelSpecification.ReferenceArguments[{}]", i);
      if (!refs[i].is_object()) fail(path_, at, "is not an object");
      TuningFileReference r;
      r.name = string(refs[i], "Name", at);
      r.target = string(refs[i], "TargetName", at);
      const auto it = std::find_if(c_.file.arguments.begin(), c_.file.arguments.end(),
                                   [&](const TuningFileArgument& a) { return a.name == r.target; });
      if (it == c_.file.arguments.end() || it->kind != ArgumentKind::vector || it->access == Access::read_only)
        fail(path_, at + ".TargetName",
             fmt::format("'{}' is not a Vector argument the kernel writes (WriteOnly or ReadWrite)", r.target));
      if (!targets.insert(r.target).second)
        fail(path_, at + ".TargetName", fmt::format("'{}' has two references", r.target));
      if (!refs[i].contains("FillType")) fail(path_, at + ".FillType", "missing; T1 requires it");
      generator_.reset();
      r.fill = fill_of(refs[i], at, it->type, true);
      if (auto m = validation_method(refs[i], at)) r.method = *m;
      r.threshold = number(refs[i], "ValidationThreshold", at, 1e-4);
      if (!(r.threshold >= 0)) fail(path_, at + ".ValidationThreshold", "is negative");
      c_.reference_generators.push_back(generator_);
      c_.file.references.push_back(std::move(r));
    }
  }

  void budget() {
    const json& b = array(doc_, "Budget", "");
    for (std::size_t i = 0; i < b.size(); ++i) {
      const std::string at = fmt::format("Budget[{}]", i);
      if (!b[i].is_object()) fail(path_, at, "is not an object with Type and BudgetValue");
      const std::string t = string(b[i], "Type", at);
      const double v = number(b[i], "BudgetValue", at, -1);
      if (!(v > 0)) fail(path_, at + ".BudgetValue", "missing or not positive");
      if (t == "ConfigurationCount")
        c_.file.budget_count = static_cast<unsigned>(std::min(v, 4e9));
      else if (t == "ConfigurationFraction") {
        if (v > 1) fail(path_, at + ".BudgetValue", "a fraction of the space is at most 1");
        c_.file.budget_fraction = v;
      } else if (t == "TuningDuration")
        c_.file.budget_seconds = v;
      else
        fail(path_, at + ".Type",
             fmt::format("'{}' is not TuningDuration, ConfigurationCount or ConfigurationFraction", t));
    }
  }

  void search() {
    const json& s = object(doc_, "Search", false);
    if (s.empty()) return;
    const std::string name = string(s, "Name", "Search");
    // T1/KTT and Kernel Tuner names → wstune's strategies.
    static const std::map<std::string, std::string, std::less<>> names{{"Deterministic", "exhaustive"},
                                                                       {"FullSearch", "exhaustive"},
                                                                       {"Exhaustive", "exhaustive"},
                                                                       {"BruteForce", "exhaustive"},
                                                                       {"brute_force", "exhaustive"},
                                                                       {"Random", "random"},
                                                                       {"RandomSearch", "random"},
                                                                       {"random_sample", "random"},
                                                                       {"Guided", "guided"},
                                                                       {"greedy_ils", "guided"},
                                                                       {"greedy_mls", "guided"},
                                                                       {"basinhopping", "guided"},
                                                                       {"firefly_algorithm", "guided"},
                                                                       {"pso", "guided"},
                                                                       {"genetic_algorithm", "genetic"},
                                                                       {"simulated_annealing", "annealing"},
                                                                       {"dual_annealing", "annealing"},
                                                                       {"bayes_opt", "bayes"},
                                                                       {"mls", "guided"},
                                                                       {"ordered_greedy_mls", "guided"},
                                                                       {"diff_evo", "differential"},
                                                                       {"minimize", "guided"},
                                                                       {"Annealing", "annealing"},
                                                                       {"MCMC", "guided"},
                                                                       {"ProfileBased", "guided"},
                                                                       {"skopt", "bayes"},
                                                                       {"pyatf_strategies", "guided"},
                                                                       {"hybrid_vndx", "guided"},
                                                                       {"adaptive_tabu_greywolf", "guided"},
                                                                       {"Auto", "auto"}};
    const auto it = names.find(name);
    if (it == names.end()) {
      std::set<std::string> all;
      for (const auto& [k, v] : names) all.insert(k);
      fail(path_, "Search.Name", fmt::format("'{}' is not a search wstune knows; use one of: {}", name, join(all)));
    }
    c_.file.strategy = it->second;
    // Attributes: Seed; Kernel Tuner's strategy options max_fevals and
    // time_limit (a Budget entry wins). KTT writes every Value as a string.
    const json& attrs = array(s, "Attributes", "Search");
    for (std::size_t i = 0; i < attrs.size(); ++i) {
      const std::string at = fmt::format("Search.Attributes[{}]", i);
      if (!attrs[i].is_object()) fail(path_, at, "is not an object with Name and Value");
      const std::string name = string(attrs[i], "Name", at);
      if (name != "Seed" && name != "max_fevals" && name != "time_limit") continue;
      const std::optional<double> v = attribute_number(attrs[i].contains("Value") ? attrs[i].at("Value") : json());
      if (name == "Seed") {
        if (!v || *v < 0 || *v != std::floor(*v) || *v > 1.8e19)
          fail(path_, at + ".Value", "a Seed is a non-negative integer");
        c_.file.search_seed = static_cast<std::uint64_t>(*v);
      } else if (!v || !(*v > 0)) {
        fail(path_, at + ".Value", fmt::format("{} is a positive number", name));
      } else if (name == "max_fevals" && !c_.file.budget_count) {
        c_.file.budget_count = static_cast<unsigned>(std::min(*v, 4e9));
      } else if (name == "time_limit" && !c_.file.budget_seconds) {
        c_.file.budget_seconds = *v;
      }
    }
  }

  // A Search attribute's Value as a number: a JSON number or a string of one.
  static std::optional<double> attribute_number(const json& v) {
    if (v.is_number()) return v.get<double>();
    if (!v.is_string()) return std::nullopt;
    const std::string t = v.get<std::string>();
    char* end = nullptr;
    const double d = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(d)) return std::nullopt;
    return d;
  }

  void device(const json& ks) {
    const json& d = object(ks, "Device", false, "KernelSpecification");
    if (d.contains("Name")) {
      c_.file.device = string(d, "Name", "KernelSpecification.Device");
      // Kernel Tuner passes Name as its device number (of platform 0 for OpenCL).
      if (!c_.file.device.empty() && std::all_of(c_.file.device.begin(), c_.file.device.end(),
                                                 [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        c_.file.device = "0:" + c_.file.device;
    } else if (d.contains("PlatformId") || d.contains("DeviceId")) {
      c_.file.device = fmt::format("{}:{}", static_cast<int>(number(d, "PlatformId", "KernelSpecification.Device", 0)),
                                   static_cast<int>(number(d, "DeviceId", "KernelSpecification.Device", 0)));
    }
    const json& w = object(doc_, "wstune", false);
    if (w.contains("OpsPerWorkItem"))
      c_.ops_per_work_item = parse(w.at("OpsPerWorkItem"), "wstune.OpsPerWorkItem", config_names(),
                                   "a tuning parameter, ProblemSize or a wstune.Sizes variable");
    metrics(w);
  }

  // wstune.Metrics: name -> expression over the configuration's names and
  // the measurements (time in ms, energy in J, power in W, edp in J*s).
  void metrics(const json& w) {
    auto names = config_names();
    names.insert({"time", "energy", "power", "edp"});
    for (const auto& [name, e] : object(w, "Metrics", false, "wstune").items()) {
      const std::string at = "wstune.Metrics." + name;
      if (name.empty() || names.count(name) || name.find_first_of(":,") != std::string::npos)
        fail(path_, at,
             "is not a usable metric name; use a name without ':' or ',' other than time, energy, power, edp and "
             "the tuning parameters");
      c_.metrics.emplace_back(name, parse(e, at, names,
                                          "a tuning parameter, ProblemSize, a wstune.Sizes variable, time (ms), "
                                          "energy (J), power (W) or edp (J*s)"));
    }
  }

  void check_signature(const json&) {
    std::string why;
    const auto params = kernel_parameters(c_.file.source, c_.file.kernel_name, &why);
    if (!params) fail(path_, "KernelSpecification.KernelName", fmt::format("{} (in {})", why, c_.file.kernel_file));
    const auto& args = c_.file.arguments;
    if (params->size() != args.size()) {
      fail(path_, "KernelSpecification.Arguments",
           fmt::format("lists {} arguments but __kernel {} in {} takes {}; list every parameter in order", args.size(),
                       c_.file.kernel_name, c_.file.kernel_file, params->size()));
    }
    // Refused only where the declaration contradicts the argument once
    // macros are expanded; a name neither a macro nor OpenCL's (a typedef, a
    // macro of another file) is left to the build to judge.
    for (std::size_t i = 0; i < args.size(); ++i) {
      const KernelParameter& k = (*params)[i];
      const bool unknown = k.spaces == 0 && k.unresolved;
      bool ok = true;
      switch (args[i].kind) {
        case ArgumentKind::vector:
          ok = ((k.can_be(AddressSpace::global) || k.can_be(AddressSpace::constant)) && k.pointer) || unknown;
          break;
        case ArgumentKind::local:
          ok = (k.can_be(AddressSpace::local) && k.pointer) || unknown;
          break;
        case ArgumentKind::scalar:
          ok = k.spaces == 0 && !k.pointer;
          break;
      }
      if (!ok) {
        fail(path_, fmt::format("KernelSpecification.Arguments[{}]", i),
             fmt::format("'{}' is a {} argument but the kernel's parameter {} is '{}'; Vector is a __global (or "
                         "__constant) pointer, Local a __local pointer, Scalar a value",
                         args[i].name,
                         args[i].kind == ArgumentKind::vector  ? "Vector"
                         : args[i].kind == ArgumentKind::local ? "Local"
                                                               : "Scalar",
                         i, k.text));
      }
      if (args[i].kind == ArgumentKind::vector && k.only(AddressSpace::constant) && args[i].access != Access::read_only)
        fail(path_, fmt::format("KernelSpecification.Arguments[{}].AccessType", i),
             fmt::format("'{}' is __constant in the kernel, so it is ReadOnly", args[i].name));
    }
  }

  // wstune.Split: the split dimension, its units, and each buffer's range.
  void split() {
    const json& w = object(doc_, "wstune", false);
    if (!w.contains("Split")) return;
    const json& sp = object(w, "Split", true, "wstune");
    static const std::set<std::string> known{"Dimension", "Units", "Granularity", "WorkItems", "Buffers"};
    for (const auto& [k, v] : sp.items())
      if (!known.count(k)) fail(path_, "wstune.Split." + k, fmt::format("unknown; use one of: {}", join(known)));
    CompiledFile::Split s;
    s.dim = split_dimension(sp);
    s.units = split_units(sp, s.dim);
    const auto config = config_names();
    if (sp.contains("Granularity"))
      s.granularity = parse(sp.at("Granularity"), "wstune.Split.Granularity", config,
                            "a tuning parameter, ProblemSize or a wstune.Sizes variable");
    auto with_units = config;
    with_units.insert("units");
    if (sp.contains("WorkItems"))
      s.work_items = parse(sp.at("WorkItems"), "wstune.Split.WorkItems", with_units,
                           "units, a tuning parameter, ProblemSize or a wstune.Sizes variable");
    split_buffers(sp, with_units, s);
    for (std::size_t a = 0; a < c_.file.arguments.size(); ++a) {
      const auto& arg = c_.file.arguments[a];
      if (arg.kind == ArgumentKind::vector && arg.access != Access::read_only && !s.first[a])
        fail(path_, "wstune.Split.Buffers",
             fmt::format("has no range for '{}', which the kernel writes: give its "
                         "First and Count (each device returns only its slice)",
                         arg.name));
    }
    c_.split = std::move(s);
  }

  // Split.Dimension (X when absent) as an axis index, one of the NDRange's.
  unsigned split_dimension(const json& sp) {
    const std::string dim = sp.contains("Dimension") ? string(sp, "Dimension", "wstune.Split") : std::string("X");
    const unsigned d = dim == "X" ? 0 : dim == "Y" ? 1 : dim == "Z" ? 2 : 3;
    if (d >= c_.file.dims)
      fail(path_, "wstune.Split.Dimension",
           fmt::format("'{}' is not a dimension of the {}-D NDRange; use X{}", dim, c_.file.dims,
                       c_.file.dims > 1 ? ", Y" : ""));
    return d;
  }

  // Split.Units, of the sizes only; ProblemSize[dim] when absent.
  expr::Expression split_units(const json& sp, unsigned dim) {
    if (sp.contains("Units"))
      return parse(sp.at("Units"), "wstune.Split.Units", size_names(), "ProblemSize or a wstune.Sizes variable");
    if (dim < c_.file.problem_size.size()) return expr::Expression::parse(fmt::format("ProblemSize[{}]", dim));
    fail(path_, "wstune.Split.Units", "missing; give the split units of the whole problem, e.g. \"ProblemSize[1]\"");
  }

  // Split.Buffers: a Vector argument's element range per slice, First and
  // Count, expressions of first and `with_units`' names.
  void split_buffers(const json& sp, const std::set<std::string>& with_units, CompiledFile::Split& s) {
    auto range_names = with_units;
    range_names.insert("first");
    const json& bufs = object(sp, "Buffers", false, "wstune.Split");
    s.first.resize(c_.file.arguments.size());
    s.count.resize(c_.file.arguments.size());
    for (const auto& [name, r] : bufs.items()) {
      const std::string at = "wstune.Split.Buffers." + name;
      const auto it = std::find_if(c_.file.arguments.begin(), c_.file.arguments.end(),
                                   [&, n = name](const TuningFileArgument& a) { return a.name == n; });
      if (it == c_.file.arguments.end() || it->kind != ArgumentKind::vector)
        fail(path_, at, "is not a Vector argument's Name");
      if (!r.is_object() || !r.contains("First") || !r.contains("Count"))
        fail(path_, at, "needs First and Count: the element range a slice reads or writes");
      const auto a = static_cast<std::size_t>(it - c_.file.arguments.begin());
      s.first[a] = parse(r.at("First"), at + ".First", range_names,
                         "first, units, a tuning parameter, ProblemSize or a wstune.Sizes variable");
      s.count[a] = parse(r.at("Count"), at + ".Count", range_names,
                         "first, units, a tuning parameter, ProblemSize or a wstune.Sizes variable");
    }
  }

  // The reference configuration: wstune.ReferenceConfiguration, else every
  // parameter's Default, else the first that satisfies the Conditions.
  void reference_configuration() {
    const auto n = c_.default_numbers();
    const json& w = object(doc_, "wstune", false);
    if (w.contains("ReferenceConfiguration")) {
      const json& rc = object(w, "ReferenceConfiguration", true, "wstune");
      json params = json::object();
      for (const auto& p : c_.file.parameters) {
        if (!rc.contains(p.name))
          fail(path_, "wstune.ReferenceConfiguration", fmt::format("misses parameter {}", p.name));
        if (std::find(p.values.begin(), p.values.end(), rc.at(p.name)) == p.values.end())
          fail(path_, "wstune.ReferenceConfiguration." + p.name,
               fmt::format("{} is not one of its Values", rc.at(p.name).dump()));
        params[p.name] = rc.at(p.name);
      }
      if (rc.size() != c_.file.parameters.size())
        fail(path_, "wstune.ReferenceConfiguration", "names something that is not a tuning parameter");
      c_.file.reference_params = params;
    }
    if (!c_.file.reference_params.empty() || c_.file.parameters.empty()) {
      if (!satisfies(c_.file.reference_params))
        fail(path_,
             w.contains("ReferenceConfiguration") ? "wstune.ReferenceConfiguration"
                                                  : "ConfigurationSpace.TuningParameters",
             fmt::format("the reference configuration ({}) violates the Conditions; name one that satisfies them",
                         c_.file.reference_params.dump()));
      (void)c_.global_size(n, c_.file.reference_params);
      return;
    }
    // The first valid configuration in the parameters' odometer order that
    // takes every Default, else (Defaults the Conditions forbid together) the
    // first valid one.
    for (const bool with_defaults : {true, false}) {
      if (with_defaults &&
          std::none_of(c_.file.defaults.begin(), c_.file.defaults.end(), [](const auto& d) { return d.has_value(); }))
        continue;
      if (auto params = first_valid(n, with_defaults)) {
        c_.file.reference_params = *params;
        (void)c_.global_size(n, *params);
        return;
      }
    }
    fail(path_, "ConfigurationSpace.Conditions",
         "leave no configuration: no combination of the parameters' values satisfies them all; relax a condition "
         "or add values");
  }

  // The first combination in odometer order (the last parameter fastest)
  // that satisfies the Conditions with the numbers `n` (the space solver),
  // each parameter with a Default held at it when `with_defaults`.
  std::optional<json> first_valid(const std::vector<std::size_t>& n, bool with_defaults) {
    return first_valid_params(c_.file.parameters, c_.constraints(n),
                              with_defaults ? c_.file.defaults : std::vector<std::optional<json>>{});
  }

  bool satisfies(const json& params) { return c_.satisfies(c_.default_numbers(), params); }

  std::string path_;
  json doc_;
  CompiledFile c_;
  std::optional<expr::Expression> generator_;  // the last fill's generator
};

}  // namespace

CompiledFile compile_tuning_file(const std::string& path) {
  return Reader(path).run();
}

}  // namespace wstune::t1

namespace wstune {

std::optional<nlohmann::json> first_valid_params(const std::vector<TuningParameter>& ps,
                                                 std::vector<Constraint> constraints,
                                                 const std::vector<std::optional<nlohmann::json>>& fixed,
                                                 const std::function<bool(const nlohmann::json&)>& accept) {
  std::vector<std::uint32_t> sizes;
  for (const auto& p : ps) sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  SpaceSolver solver(std::move(sizes), std::move(constraints));
  for (std::size_t k = 0; k < ps.size() && k < fixed.size(); ++k) {
    if (!fixed[k]) continue;
    const auto at = std::find(ps[k].values.begin(), ps[k].values.end(), *fixed[k]);
    if (at == ps[k].values.end()) return std::nullopt;
    solver.fix(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(at - ps[k].values.begin()));
  }
  const auto params_of = [&](std::span<const std::uint32_t> idx) {
    nlohmann::json params = nlohmann::json::object();
    for (std::size_t k = 0; k < idx.size(); ++k) params[ps[k].name] = ps[k].values[idx[k]];
    return params;
  };
  if (!accept) {
    const auto first = solver.first();
    if (!first) return std::nullopt;
    return params_of(*first);
  }
  std::optional<nlohmann::json> found;
  solver.for_each([&](std::span<const std::uint32_t> idx) {
    auto params = params_of(idx);
    if (accept(params)) found = std::move(params);
    return !found;
  });
  return found;
}

}  // namespace wstune
