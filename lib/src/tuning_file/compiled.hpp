#pragma once
// Internal: a tuning file with every expression parsed once, the name
// bindings expressions are evaluated in, and the reader's error helper.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "expr/expression.hpp"
#include "space/solver.hpp"
#include "tuning_file/tuning_file.hpp"

namespace wstune::t1 {

/// Name bindings for one evaluation: a few names, searched from the most
/// recently added (so a later binding shadows an earlier one).
class Bindings final : public expr::Env {
 public:
  /// Binds `name` (a later set() of the same name shadows it).
  void set(std::string name, expr::Value value) { values_.emplace_back(std::move(name), std::move(value)); }
  /// The value of the most recent binding of `name`.
  expr::Value* slot(std::string_view name);
  const expr::Value* find(std::string_view name) const override;

 private:
  std::vector<std::pair<std::string, expr::Value>> values_;
};

/// A JSON value as an expression value (numbers, bools, strings).
expr::Value to_value(const nlohmann::json& j);
/// An expression value (int, float, bool or str) as JSON; throws UsageError for lists.
nlohmann::json to_json_value(const expr::Value& v);

/// A tuning file with its expressions parsed.
struct CompiledFile {
  TuningFile file;
  std::vector<expr::Expression> conditions;
  std::array<std::optional<expr::Expression>, 3> global, local;       // engaged below dims (global: not with GridDiv)
  std::array<std::vector<expr::Expression>, 3> grid_divisors;         // GridDiv (file.grid_div): divisors per axis
  std::vector<std::optional<expr::Expression>> problem_size_exprs;    // per ProblemSize entry: engaged for expressions
  std::vector<std::optional<expr::Expression>> sizes;                 // per argument (vector, local)
  std::vector<std::optional<expr::Expression>> generators;            // per argument
  std::vector<std::optional<expr::Expression>> scalar_values;         // per argument (wstune.ScalarValues)
  std::vector<std::optional<expr::Expression>> reference_generators;  // per reference
  std::optional<expr::Expression> ops_per_work_item;                  // wstune.OpsPerWorkItem
  std::vector<std::pair<std::string, expr::Expression>> metrics;      // wstune.Metrics, by name
  std::vector<bool> local_depends_on_local_size;                      // per argument
  /// wstune.Split: how a slice of `units` split units starting at `first` maps
  /// to work-items and buffer ranges (docs/tuning-files.md).
  struct Split {
    unsigned dim = 0;                                           // NDRange dimension the slices cut
    std::optional<expr::Expression> units;                      // split units of the whole problem (sizes)
    std::optional<expr::Expression> granularity;                // slices are multiples of it (parameters)
    std::optional<expr::Expression> work_items;                 // work-items of a slice of `units` units
    std::vector<std::optional<expr::Expression>> first, count;  // per argument: element range of a slice
  };
  std::optional<Split> split;

  /// ProblemSize (a list) and the size variables, from a problem's numbers
  /// (problem_size entries, then one per size variable); ProblemSize entries
  /// that are expressions of the parameters take the reference
  /// configuration's values.
  [[nodiscard]] Bindings size_bindings(const std::vector<std::size_t>& n) const;
  /// size_bindings() plus every parameter's value (`params`, a JSON object);
  /// ProblemSize entries that are expressions take `params`' values.
  [[nodiscard]] Bindings config_bindings(const std::vector<std::size_t>& n, const nlohmann::json& params) const;
  /// size_bindings() plus every parameter bound to the list of its values
  /// (argument sizes: Kernel Tuner's `max(filter_width)`).
  [[nodiscard]] Bindings list_bindings(const std::vector<std::size_t>& n) const;
  /// True when every Condition holds for `params`. Throws UsageError naming
  /// the condition when one cannot be evaluated.
  [[nodiscard]] bool satisfies(const std::vector<std::size_t>& n, const nlohmann::json& params) const;
  /// The Conditions as the space solver's constraints with the problem's
  /// numbers `n` (conditions.hpp); a condition that names a ProblemSize
  /// given by expressions of tuning parameters also reads those parameters
  /// (problem_size_constraint()). The constraints refer to this object:
  /// valid while it lives.
  [[nodiscard]] std::vector<Constraint> constraints(const std::vector<std::size_t>& n) const;
  /// Condition `c` as a constraint over the parameters it and ProblemSize's
  /// expressions read, evaluated by the interpreter with each combination's
  /// ProblemSize (config_bindings()), as satisfies() evaluates it.
  [[nodiscard]] Constraint problem_size_constraint(const std::vector<std::size_t>& n, std::size_t c) const;
  /// The NDRange (dims dimensions) for `params`: GlobalSize (× LocalSize
  /// with GlobalSizeType CUDA), or Kernel Tuner's grid with GridDiv; throws
  /// UsageError naming the expression when a size is not a positive integer.
  [[nodiscard]] Extent global_size(const std::vector<std::size_t>& n, const nlohmann::json& params) const;
  /// The local size `params` set (LocalSize X/Y/Z), nullopt when searched.
  [[nodiscard]] LocalSize local_size(const std::vector<std::size_t>& n, const nlohmann::json& params) const;
  /// Element count of vector argument `a`.
  [[nodiscard]] std::size_t buffer_elements(std::size_t a, const std::vector<std::size_t>& n) const;
  /// The problem numbers of the file's defaults (ProblemSize, then size variables).
  [[nodiscard]] std::vector<std::size_t> default_numbers() const;
  /// The ProblemSize list for problem numbers `n`, its expression entries
  /// evaluated in `params` (a parameter's binding; null: the reference
  /// configuration's values).
  [[nodiscard]] expr::Value problem_size_value(const std::vector<std::size_t>& n, const expr::Env* params) const;
};

/// Evaluates `e` to a positive integer (an NDRange or buffer size), naming
/// `what` (e.g. "KernelSpecification.GlobalSize.X") in the UsageError.
std::size_t positive_size(const expr::Expression& e, const expr::Env& env, const std::string& file,
                          std::string_view what);

/// Parses and validates a tuning file (reader.cpp).
CompiledFile compile_tuning_file(const std::string& path);

/// "FILE: PATH: what" as a UsageError.
[[noreturn]] void fail(const std::string& file, std::string_view json_path, const std::string& what);

}  // namespace wstune::t1
