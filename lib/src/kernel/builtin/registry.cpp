// The kernel registry: name -> descriptor, in the paper's Table 3 order.
#include <fmt/format.h>

#include "kernel/kernel.hpp"
#include "wstune/error.hpp"

namespace wstune {

const KernelSpec& matmul_spec();
const KernelSpec& bilinear_spec();
const KernelSpec& sort_spec();
const KernelSpec& trapezoid_spec();

namespace {
const std::vector<const KernelSpec*>& all_specs() {
  static const std::vector<const KernelSpec*> specs{&matmul_spec(), &bilinear_spec(), &sort_spec(), &trapezoid_spec()};
  return specs;
}
}  // namespace

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto* k : all_specs()) names.emplace_back(k->name());
  return names;
}

const KernelSpec& kernel_spec(std::string_view name) {
  for (const auto* k : all_specs())
    if (k->name() == name) return *k;
  throw UsageError(fmt::format("unknown kernel '{}': use one of {}", name, fmt::join(kernel_names(), ", ")));
}

}  // namespace wstune
