#pragma once

#include "wstune/export.h"
/// @file version.hpp
/// The library's version.

#include <string_view>

namespace wstune {

/// The version of the linked libwstune, "MAJOR.MINOR.PATCH".
WSTUNE_EXPORT std::string_view version() noexcept;

}  // namespace wstune
