#pragma once
/// @file fuzz.hpp
/// The fuzz targets' entry points (issue 17). Each takes one input and
/// returns normally when wstune handled it as documented (accepted, or
/// refused with UsageError or the module's own error type); on anything
/// else it prints what went wrong and calls std::abort(), which libFuzzer
/// reports as a crash and the regression test (tests/test_fuzz_regressions.cpp)
/// as a failure. The libFuzzer binaries (fuzz/CMakeLists.txt, WSTUNE_FUZZ)
/// and the regression test call the same functions. docs/results/fuzz.md.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wstune::fuzz {

/// One fuzz target: its name (a directory under fuzz/corpus and
/// fuzz/regressions) and its entry point.
struct Target {
  std::string_view name;                                    ///< e.g. "import"
  void (*run)(const std::uint8_t* data, std::size_t size);  ///< the entry point
};

/// Store::import_json() on an in-memory store, the bytes parsed by
/// parse_json_input(); an accepted document must round-trip: its export
/// imports into a fresh store, importing either again adds nothing, and
/// dump_outline() of the export parses back to it.
void import_document(const std::uint8_t* data, std::size_t size);
/// wstuned's job-file parser (daemon/protocol/jobs.hpp parse_jobs); every accepted
/// job must come back the same through to_json() and job_from_json().
void job_file(const std::uint8_t* data, std::size_t size);
/// parse_json_input() against nlohmann's own parser: the depth bound neither
/// refuses a document within it nor passes one beyond it; dump_outline()
/// parses back; messages stay short.
void json_input(const std::uint8_t* data, std::size_t size);
/// The T1 expression parser (wstune/expression.hpp): parse; an accepted
/// expression's to_string() parses to the same text, and evaluating it
/// with no names bound ends in a value or an ExprError; compiled with its
/// names as slots (expr/compiled.hpp) it gives the interpreter's truth or
/// error for each of a few bindings.
void expression(const std::uint8_t* data, std::size_t size);
/// The T1 tuning-file reader (wstune/tuning_file.hpp read_tuning_file()) on
/// the bytes as a file next to a small OpenCL kernel file.
void tuning_file(const std::uint8_t* data, std::size_t size);

/// Every target (generated from WSTUNE_FUZZ_TARGETS in fuzz/targets.cmake:
/// a new target is one line there and its entry point here).
inline constexpr Target kTargets[] = {
#include "fuzz_targets.inc"
};

}  // namespace wstune::fuzz
