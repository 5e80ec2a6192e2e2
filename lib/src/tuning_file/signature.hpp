#pragma once
// Internal: the parameters of a __kernel function, read from OpenCL C source
// text (comments removed), so a tuning file's Arguments can be checked before
// anything is built. The preprocessor is not run, but object-like macros
// (`#define NAME body`, every definition in every #if branch) are expanded
// in the parameters, so a qualifier that the tuning parameters choose
// (KTT's `MEMORY_TYPE_AOS vector* atomInfo`, where the macro is
// `__global const` or `__constant`) counts as each address space it can be.
// What cannot be resolved (an unknown type or qualifier name) is left to the
// OpenCL build to judge: only a declaration that contradicts an argument is
// refused.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wstune::t1 {

/// A kernel parameter's address space qualifier (OpenCL 1.2 §6.5).
enum class AddressSpace : std::uint8_t { none = 0, global = 1, constant = 2, local = 4 };

/// One parameter as written.
struct KernelParameter {
  /// The address spaces its qualifiers can be once macros are expanded (a
  /// bitwise or of AddressSpace values; 0: none written, passed by value
  /// unless `unresolved`).
  std::uint8_t spaces = 0;
  bool pointer = false;     ///< a `*` or `[` after expansion: a pointer parameter
  bool unresolved = false;  ///< names a type or qualifier that is neither a macro nor an OpenCL C keyword or type
  std::string text;         ///< the declaration as written, blanks collapsed
  /// True when the parameter can be in address space `s`.
  [[nodiscard]] bool can_be(AddressSpace s) const { return (spaces & static_cast<std::uint8_t>(s)) != 0; }
  /// True when `s` is the only address space it can be.
  [[nodiscard]] bool only(AddressSpace s) const { return spaces == static_cast<std::uint8_t>(s); }
};

/// The parameters of `__kernel void name(...)` in `source`, or nullopt with
/// `why` set when no such kernel is found.
std::optional<std::vector<KernelParameter>> kernel_parameters(std::string_view source, std::string_view name,
                                                              std::string* why);

}  // namespace wstune::t1
