#pragma once
/// @file json_input.hpp
/// JSON from outside (export files, job files, tuning files): parsing with a
/// bound on nesting depth, depth checks of documents built elsewhere, short
/// descriptions of values for error messages, and a writer whose output
/// grows linearly with nesting depth. nlohmann::json's dump(), copy and
/// comparison recurse once per level, so a document nested 100,000 deep
/// overflows the stack; every document wstune reads is refused beyond
/// kMaxJsonDepth levels before it is built (issue 17, docs/store.md).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wstune {

/// The deepest nesting of arrays and objects wstune reads or stores: a
/// document whose values nest deeper is refused. A scalar has depth 0,
/// `[]` and `{}` depth 1, `[[1]]` depth 2.
inline constexpr std::size_t kMaxJsonDepth = 256;

/// How many characters of input an error message quotes at most.
inline constexpr std::size_t kMaxQuotedChars = 80;

/// `text` cut to at most `max_chars` bytes (on a UTF-8 boundary) with "…"
/// and the full length appended when cut: for quoting input in messages.
std::string bounded(std::string_view text, std::size_t max_chars = kMaxQuotedChars);

/// A short description of `j` for messages, never longer than about
/// `max_chars` + 40 characters and never recursing: scalars as JSON text
/// (bounded()), arrays and objects as "an array of N element(s)" / "an object
/// with N key(s)".
std::string describe_json(const nlohmann::json& j, std::size_t max_chars = kMaxQuotedChars);

/// `j` as a whole number from `min` to `max` (input from outside: a
/// negative, fractional or out-of-range number is refused). Throws
/// UsageError "<where> is V; give a whole number from MIN to MAX", `where`
/// the JSON path.
std::uint64_t whole_from_json(const nlohmann::json& j, std::string_view where, std::uint64_t min, std::uint64_t max);

/// The nesting depth of `j` (see kMaxJsonDepth), computed without recursion.
std::size_t json_depth(const nlohmann::json& j);

/// Throws UsageError "<where>: ... nested deeper than max_depth levels at
/// PATH ..." when `j` nests deeper than `max_depth` (no recursion; PATH is a
/// JSON path such as `calibrations[0].params[0][0]…`, bounded).
void check_json_depth(const nlohmann::json& j, std::string_view where, std::size_t max_depth = kMaxJsonDepth);

/// Parses `text` as one JSON document. A document nested deeper than
/// `max_depth` is refused before anything is built. Throws UsageError
/// naming `origin` (a file name, or "--job FILE") and: the JSON path and
/// depth where the nesting exceeds the bound, or the parser's message (with
/// its byte position; quoted input bounded) for malformed text.
nlohmann::json parse_json_input(std::string_view text, std::string_view origin, std::size_t max_depth = kMaxJsonDepth);

/// `j` as text with the outermost `indent_levels` levels of arrays and
/// objects on one line per element (indented by one space per level) and
/// every deeper value compact on its element's line: the size grows linearly
/// with nesting depth (nlohmann's dump(indent) grows with its square).
/// `j` must be no deeper than kMaxJsonDepth (dump() recurses).
std::string dump_outline(const nlohmann::json& j, unsigned indent_levels);

}  // namespace wstune
