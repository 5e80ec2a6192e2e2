#pragma once
/// @file tuning_file.hpp
/// Kernels described by a T1 tuning file (TuningSchema T1 1.0.0, read by
/// Kernel Tuner and KTT): the reader, which validates the whole file and
/// names the JSON path and the fix of anything wrong, and the KernelSpec it
/// yields, so a user's own OpenCL kernel goes through the same tune, run and
/// store paths as wstune's built-in kernels. wstune's own settings live in one
/// namespaced object, `"wstune": {...}` at the top level, so the file stays
/// valid T1. Format and extension: docs/tuning-files.md.
/// Sources: TuningSchema T1 (kernel_tuner/schema/T1/1.0.0/input-schema.json),
/// KTT's TuningLoader (validation methods, fill types), OpenCL 1.2 §5.6–§5.8.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/host_buffer.hpp"
#include "kernel/kernel.hpp"
#include "wstune/configuration.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// How a tuning file fills a buffer (T1 FillType; Script and BinaryHDF are refused).
enum class FillType {
  constant,   ///< every element FillValue
  random,     ///< uniform in [0, FillValue) (KTT's convention), seeded by RandomSeed
  generator,  ///< DataSource is an expression of the element index `i` (and the sizes)
  binary_raw  ///< DataSource is a file of raw elements, relative to the tuning file
};

/// What a kernel argument is (T1 MemoryType; Symbol is refused).
enum class ArgumentKind {
  scalar,  ///< a value passed by clSetKernelArg (FillValue)
  vector,  ///< a __global buffer
  local    ///< a __local buffer of Size elements (an expression of the parameters and LocalSize)
};

/// How the kernel uses a buffer (T1 AccessType; ReadWrite when absent, as in KTT).
enum class Access { read_only, write_only, read_write };

/// How written buffers are compared with their reference (T1 ValidationMethod,
/// KTT's definitions): the sum of |out − ref| over all components, each
/// |out − ref|, or each |out − ref| / |ref| (|out − ref| where ref is 0),
/// against ValidationThreshold.
/// wstune.Validation adds `sum_relative`: |Σout − Σref| / |Σref| (|Σout −
/// Σref| where Σref is 0), for outputs whose elements may differ while their
/// total may not (Kernel Tuner's reduction example verifies the sum of the
/// per-block partial sums).
enum class ValidationMethod { absolute_difference, side_by_side, side_by_side_relative, sum_relative };

/// How T1 GlobalSize counts (KernelSpecification.GlobalSizeType, KTT's
/// meaning): work-items (OpenCL), or work-groups (CUDA, Vulkan), so the
/// NDRange is GlobalSize × LocalSize.
enum class GlobalSizeType { opencl, cuda };

/// "AbsoluteDifference", "SideBySideComparison", "SideBySideRelativeComparison", "SumRelativeComparison".
std::string_view to_string(ValidationMethod m) noexcept;

/// A buffer's data source.
struct Fill {
  FillType type = FillType::constant;  ///< how
  double value = 0;                    ///< FillValue (constant; random: the upper bound)
  std::optional<std::uint64_t> seed;   ///< RandomSeed (random; else derived from the run's seed and the argument)
  std::string expression;              ///< generator: an expression of `i`
  std::string data_source;             ///< binary_raw: the file, resolved against the tuning file's directory
};

/// One kernel argument (T1 `KernelSpecification.Arguments[]`), in kernel order.
struct TuningFileArgument {
  std::string name;                          ///< its name (for references and messages)
  ArgumentKind kind = ArgumentKind::vector;  ///< scalar, vector or local
  ElementType type = kFloat32;               ///< element type
  Access access = Access::read_write;        ///< vector: how the kernel uses it
  std::string size;                          ///< vector/local: element count, an expression
  Fill fill;                                 ///< scalar: its value (FillValue); vector: its initial contents
  /// scalar: wstune.ScalarValues' expression for it (of the sizes and the
  /// parameters, e.g. "ProblemSize[0]"), used instead of FillValue; "" for none.
  std::string value_expression;
  /// vector: true when `size` is wstune.ArgumentSizes' expression (of the
  /// sizes) instead of the T1 Size, which other tools keep reading.
  bool size_from_extension = false;
};

/// One expected output (T1 `ReferenceArguments[]`).
struct TuningFileReference {
  std::string name;    ///< its name
  std::string target;  ///< the written vector argument it checks (TargetName)
  Fill fill;           ///< the expected contents
  /// The comparison; SideBySideComparison when the file names none (KTT's
  /// default, the one reader of ReferenceArguments).
  ValidationMethod method = ValidationMethod::side_by_side;
  double threshold = 1e-4;  ///< ValidationThreshold
};

/// A read and validated tuning file. Every expression parsed, every name
/// checked, every file found; sizes and values are evaluated for a problem.
struct TuningFile {
  std::string path;                           ///< the file as given
  std::string kernel_name;                    ///< KernelName: the __kernel function
  std::string kernel_file;                    ///< KernelFile resolved against the file's directory
  std::string source;                         ///< the kernel file's text
  std::vector<std::string> compiler_options;  ///< CompilerOptions
  std::vector<TuningParameter> parameters;    ///< TuningParameters with their values evaluated
  /// Per parameter: its T1 "Default" when that is one of its Values, else
  /// none (the look-up chain's "default" level; the reference configuration).
  std::vector<std::optional<nlohmann::json>> defaults;
  std::vector<std::string> conditions;                       ///< Conditions' expressions
  unsigned dims = 1;                                         ///< NDRange dimensions: 1 + Y given + Z given
  std::array<std::string, 3> global;                         ///< GlobalSize X, Y, Z ("1" beyond dims; "" with GridDiv)
  GlobalSizeType global_size_type = GlobalSizeType::opencl;  ///< GlobalSizeType (OpenCL when absent)
  /// Kernel Tuner's grid: when the file has GridDivX, GridDivY or GridDivZ,
  /// the NDRange is ceil(ProblemSize[d] / Π GridDiv[d]) work-groups of
  /// LocalSize[d] in each dimension (GlobalSize is not read, as in Kernel
  /// Tuner); a dimension without GridDiv divides by its block_size_x/y/z
  /// parameter (1 without it). Each entry is the divisors' expressions.
  bool grid_div = false;
  std::array<std::vector<std::string>, 3> grid_divisors;  ///< GridDivX, GridDivY, GridDivZ (with grid_div)
  std::array<std::string, 3> local;    ///< LocalSize X, Y, Z (ignored when the local size is searched)
  bool search_local = false;           ///< wstune.LocalSize = "search": group shapes are searched per parameter set
  bool guards_bounds = false;          ///< wstune.GuardsBounds: the kernel checks its NDRange bounds
  Priority priority = Priority::none;  ///< wstune.Priority ("x", "y"; paper §3.2.3)
  std::vector<TuningFileArgument> arguments;    ///< Arguments, kernel order
  std::vector<TuningFileReference> references;  ///< ReferenceArguments
  /// Comparison of written buffers without a reference of their own, against
  /// the reference configuration's (wstune.Validation; by default
  /// SideBySideRelativeComparison 1e-4 for floats, exact for integers).
  std::optional<ValidationMethod> default_method;
  double default_threshold = 1e-4;  ///< with default_method
  /// ProblemSize (Kernel Tuner's KernelSpecification field), 1–3 entries; 0
  /// for an entry that is an expression of the tuning parameters
  /// (problem_size_expressions), which --size cannot bind.
  std::vector<std::size_t> problem_size;
  /// Per ProblemSize entry: "" for a number, else its expression of the
  /// tuning parameters (Kernel Tuner's reduction: "num_blocks*block_size_x"),
  /// evaluated with each configuration's values (buffer sizes and Generators,
  /// which no configuration owns, take the reference configuration's).
  std::vector<std::string> problem_size_expressions;
  /// wstune.Sizes: named size variables and their default values, usable in
  /// every expression and bound with --size NAME=V.
  std::vector<std::pair<std::string, std::size_t>> size_variables;
  /// The reference configuration: wstune.ReferenceConfiguration, else the
  /// first valid configuration (in the parameters' order) that takes each
  /// parameter's "Default" where it has one, else the first valid one.
  nlohmann::json reference_params = nlohmann::json::object();
  std::string strategy;                      ///< Search.Name as a wstune strategy ("" when absent)
  std::optional<std::uint64_t> search_seed;  ///< Search.Attributes "Seed"
  std::optional<unsigned> budget_count;      ///< Budget ConfigurationCount
  std::optional<double> budget_fraction;     ///< Budget ConfigurationFraction (of the space)
  std::optional<double> budget_seconds;      ///< Budget TuningDuration (s)
  std::string device;                        ///< KernelSpecification.Device as a selector ("" when absent)
  nlohmann::json split = nlohmann::json();   ///< wstune.Split, raw (how the kernel splits across devices)
};

/// Reads and validates a tuning file: required fields and their types, every
/// expression (parsed; its names must be parameters, ProblemSize, size
/// variables, or `i`/LocalSize where allowed), the parameters' values and
/// types, the kernel file (relative to the tuning file) and that the kernel
/// is in it with arguments matching Arguments (count and address spaces),
/// BinaryRaw files and their sizes, references naming written buffers, and
/// that the constraints leave a configuration. Language must be OpenCL.
/// Throws UsageError "FILE: JSON.PATH: what is wrong; the fix" on any
/// problem (the CLI exits 2).
TuningFile read_tuning_file(const std::string& path);

/// The KernelSpec of the tuning file at `path` (read_tuning_file() first;
/// throws its UsageError). Its sizes are the file's ProblemSize and size
/// variables; parse_size() binds others: "4096x4096" (ProblemSize),
/// "ProblemSize[1]=2048", "N=4096" (a wstune.Sizes variable), several
/// separated by commas. The problem's text (the stored size) names them all.
/// A file without ProblemSize and size variables has one problem, "fixed":
/// parse_size() accepts that text and refuses any other (UsageError).
/// A Problem without parameter values (Problem::params empty) runs the
/// reference configuration's. Buffers are filled per Arguments (Generator:
/// `i` runs over components),
/// outputs are every written Vector argument, verified against
/// ReferenceArguments or, without them, the reference configuration's outputs.
std::shared_ptr<const KernelSpec> load_tuning_file(const std::string& path);

/// The first valid combination of `ps`' values in odometer order (the last
/// parameter fastest) under `constraints` (KernelSpec::parameter_constraints,
/// the space solver), with parameter k held at `fixed[k]` where that is set
/// (a value not among its Values: nullopt); nullopt when none is valid.
/// With `accept`, the first valid one it accepts too, in the solver's
/// order (not odometer order). Throws UsageError from a constraint that
/// cannot be evaluated.
std::optional<nlohmann::json> first_valid_params(const std::vector<TuningParameter>& ps,
                                                 std::vector<Constraint> constraints,
                                                 const std::vector<std::optional<nlohmann::json>>& fixed,
                                                 const std::function<bool(const nlohmann::json&)>& accept = nullptr);

/// The tuning file behind a KernelSpec from described_kernel(), or nullptr
/// for wstune's built-in kernels.
const TuningFile* tuning_file_of(const KernelSpec& spec);

}  // namespace wstune
