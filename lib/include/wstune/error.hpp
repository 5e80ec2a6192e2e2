#pragma once

#include "wstune/export.h"
/// @file error.hpp
/// Exceptions and OpenCL error checking. Every OpenCL call in wstune goes
/// through WSTUNE_CL_CHECK, which records the call text, the error code and
/// its name (after CLBlast's clpp11.hpp CheckError); destructors use
/// check_nothrow instead (they must not throw).

#include <stdexcept>
#include <string>
#include <string_view>

#include <CL/cl.h>

namespace wstune {

/// Base of every wstune exception.
class WSTUNE_EXPORT Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input from a user or caller: an unknown kernel, a malformed size, a
/// device that does not exist. The message names the input and the fix.
/// Command-line tools exit with status 2 on it.
class WSTUNE_EXPORT UsageError : public Error {
 public:
  using Error::Error;
};

/// An OpenCL call returned an error.
class WSTUNE_EXPORT ClError : public Error {
 public:
  /// @param call the call's source text, e.g. "clEnqueueNDRangeKernel(...)"
  /// @param code the OpenCL error code (negative)
  ClError(std::string call, cl_int code);
  /// The call's source text.
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  /// The OpenCL error code, e.g. -54.
  [[nodiscard]] cl_int code() const noexcept { return code_; }
  /// The code's name, e.g. "CL_INVALID_WORK_GROUP_SIZE".
  [[nodiscard]] std::string_view name() const noexcept;

 private:
  std::string call_;
  cl_int code_;
};

/// clBuildProgram failed; carries the build log (OpenCL 1.2 §5.6.2).
class WSTUNE_EXPORT BuildError : public ClError {
 public:
  /// @param log the device's CL_PROGRAM_BUILD_LOG
  BuildError(std::string call, cl_int code, std::string log);
  /// The compiler's build log.
  [[nodiscard]] const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

/// The name of an OpenCL error code ("CL_INVALID_WORK_GROUP_SIZE" for -54);
/// "CL_UNKNOWN_ERROR" for codes not in the OpenCL 3.0 headers.
/// Source: OpenCL 3.0 API spec, Appendix "Error Codes".
WSTUNE_EXPORT std::string_view cl_error_name(cl_int code) noexcept;

/// Throws ClError(call, code) if code != CL_SUCCESS.
WSTUNE_EXPORT void check(cl_int code, const char* call);

/// For destructors: logs a failing code to stderr, never throws.
WSTUNE_EXPORT void check_nothrow(cl_int code, const char* call) noexcept;

}  // namespace wstune

/// Evaluates an expression returning cl_int and throws wstune::ClError with
/// the expression's text when it is not CL_SUCCESS.
#define WSTUNE_CL_CHECK(expr) ::wstune::check((expr), #expr)
