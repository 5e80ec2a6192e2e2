#pragma once
// Internal: the parameters of a __kernel function, read from OpenCL C source
// text (comments removed; the preprocessor is not run), so a tuning file's
// Arguments can be checked before anything is built.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wstune::t1 {

/// A kernel parameter's address space qualifier (OpenCL 1.2 §6.5).
enum class AddressSpace { none, global, constant, local };

/// One parameter as written.
struct KernelParameter {
  AddressSpace space = AddressSpace::none;  ///< its address space (none: passed by value)
  std::string text;                         ///< the declaration, blanks collapsed
};

/// The parameters of `__kernel void name(...)` in `source`, or nullopt with
/// `why` set when no such kernel is found.
std::optional<std::vector<KernelParameter>> kernel_parameters(std::string_view source, std::string_view name,
                                                              std::string* why);

}  // namespace wstune::t1
