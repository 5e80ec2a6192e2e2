#pragma once
/// @file version.hpp
/// The library's version.

#include <string_view>

namespace wstune {

/// The version of the linked libwstune, "MAJOR.MINOR.PATCH".
std::string_view version() noexcept;

}  // namespace wstune
