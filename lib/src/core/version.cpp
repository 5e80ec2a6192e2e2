#include "wstune/version.hpp"

#include "wstune_config.hpp"

namespace wstune {
std::string_view version() noexcept {
  return WSTUNE_VERSION_STRING;
}
}  // namespace wstune
