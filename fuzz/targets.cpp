// The fuzz targets' entry points (fuzz.hpp). Each input is handled the way
// the CLI or wstuned handles a file: refused with UsageError (the module's
// own error types derive from it) is fine; any other exception, or an
// accepted input that breaks an invariant, is a bug and aborts.
#include "fuzz.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "expr/compiled.hpp"
#include "expr/expression.hpp"
#include "format/json_input.hpp"
#include "protocol/jobs.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace wstune::fuzz {

using nlohmann::json;

namespace {

[[noreturn]] void bug(std::string_view target, std::string_view what) {
  std::fprintf(stderr, "fuzz target %.*s: %.*s\n", static_cast<int>(target.size()), target.data(),
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A refusal must say what is wrong in a bounded message.
void check_message(std::string_view target, const std::exception& e) {
  if (std::string_view(e.what()).size() > 4096) bug(target, "a refusal's message is longer than 4096 bytes");
}

std::int64_t added(const ImportStats& s) {
  return s.devices + s.sessions + s.trials + s.best_configs + s.split_runs + s.calibrations;
}

}  // namespace

void import_document(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view name = "import";
  json doc;
  try {
    doc = parse_json_input(text_of(data, size), "input");
  } catch (const UsageError& e) {
    check_message(name, e);
    return;
  }
  try {
    Store a(":memory:");
    ImportStats first;
    try {
      first = a.import_json(doc);
    } catch (const UsageError& e) {
      check_message(name, e);
      return;
    }
    // Accepted: nothing may be lost or doubled on the way round.
    if (added(a.import_json(doc)) != 0) bug(name, "importing the same document twice added rows");
    const json out = a.export_json();
    if (json::parse(dump_outline(out, 4)) != out) bug(name, "dump_outline() of the export does not parse back to it");
    Store b(":memory:");
    const ImportStats copied = b.import_json(out);
    if (copied.sessions != a.check().sessions || copied.trials != a.check().trials ||
        copied.best_configs != a.check().best_configs) {
      bug(name, "the export does not import whole into a fresh store");
    }
    if (added(b.import_json(out)) != 0) bug(name, "importing the export twice added rows");
    if (added(a.import_json(out)) != 0) bug(name, "the export imported into its own store added rows");
    (void)first;
  } catch (const std::exception& e) {
    bug(name, std::string("an accepted document failed with something other than UsageError: ") + e.what());
  }
}

void job_file(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view name = "jobs";
  try {
    const json doc = parse_json_input(text_of(data, size), "--job input");
    std::vector<daemon::Job> jobs;
    try {
      jobs = daemon::parse_jobs(doc, daemon::Job{}, "input");
    } catch (const UsageError& e) {
      check_message(name, e);
      return;
    }
    for (const daemon::Job& j : jobs) {
      const json back = daemon::to_json(daemon::job_from_json(daemon::to_json(j), daemon::Job{}, "round trip"));
      if (back != daemon::to_json(j)) bug(name, "a job does not come back the same through to_json()");
    }
  } catch (const UsageError& e) {
    check_message(name, e);
  } catch (const std::exception& e) {
    bug(name, std::string("failed with something other than UsageError: ") + e.what());
  }
}

void json_input(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view name = "json_input";
  constexpr std::size_t kBound = 8;  // small, so the fuzzer reaches it
  const std::string_view text = text_of(data, size);
  try {
    json doc;
    try {
      doc = parse_json_input(text, "input", kBound);
    } catch (const UsageError& e) {
      check_message(name, e);
      if (std::string_view(e.what()).find("nested deeper") == std::string_view::npos) return;
      // Refused for its depth: nlohmann's own parser (iterative) must find
      // the text malformed or deeper than the bound.
      const json full = json::parse(text.begin(), text.end(), nullptr, false);
      if (!full.is_discarded() && json_depth(full) <= kBound) bug(name, "a document within the bound was refused");
      return;
    }
    if (json_depth(doc) > kBound) bug(name, "a document deeper than the bound was accepted");
    check_json_depth(doc, "input", kBound);
    for (unsigned levels : {0u, 2u, 4u}) {
      if (json::parse(dump_outline(doc, levels)) != doc) bug(name, "dump_outline() does not parse back");
    }
    if (describe_json(doc).size() > kMaxQuotedChars + 64) bug(name, "describe_json() is not bounded");
    if (bounded(text).size() > kMaxQuotedChars + 40) bug(name, "bounded() is not bounded");
  } catch (const std::exception& e) {
    bug(name, std::string("unexpected exception: ") + e.what());
  }
}

namespace {

// The compiled form (expr/compiled.hpp) against the interpreter, each of
// the first four free names a slot taking 0, 1, -1 or 7 (the others
// unbound): the same truth or the same error for the first bindings.
void compiled_agrees(const expr::Expression& e) {
  constexpr std::string_view name = "expression";
  std::vector<std::string> slots = e.names();
  if (slots.size() > 4) slots.resize(4);
  const std::vector<expr::Value> vals{expr::Value(0), expr::Value(1), expr::Value(-1), expr::Value(7)};
  const expr::CompiledExpression c(e, slots, std::vector<std::vector<expr::Value>>(slots.size(), vals), expr::MapEnv{});
  auto outcome = [](auto&& f) -> std::string {
    try {
      return f() ? "true" : "false";
    } catch (const expr::ExprError& err) {
      return err.what();
    }
  };
  std::vector<std::uint32_t> idx(slots.size(), 0);
  for (int binding = 0; binding < 6; ++binding) {
    expr::MapEnv env;
    for (std::size_t k = 0; k < slots.size(); ++k) {
      idx[k] = static_cast<std::uint32_t>((binding + k) % vals.size());
      env.set(slots[k], vals[idx[k]]);
    }
    if (outcome([&] { return e.eval(env).as_bool(); }) != outcome([&] { return c.test(idx); }))
      bug(name, "the compiled expression and the interpreter disagree");
  }
}

}  // namespace

void expression(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view name = "expression";
  const std::string_view text = text_of(data, size);
  try {
    expr::Expression e = expr::Expression::parse(text);
    const std::string canonical = e.to_string();
    const expr::Expression again = expr::Expression::parse(canonical);
    if (again.to_string() != canonical) bug(name, "to_string() does not parse back to the same text");
    try {
      (void)e.eval(expr::MapEnv{});
    } catch (const expr::ExprError& err) {
      check_message(name, err);
    }
    compiled_agrees(e);
  } catch (const expr::ExprError& err) {
    check_message(name, err);
  } catch (const std::exception& err) {
    bug(name, std::string("failed with something other than ExprError: ") + err.what());
  }
}

void tuning_file(const std::uint8_t* data, std::size_t size) {
  constexpr std::string_view name = "tuning_file";
  // One directory per process holding the kernel files the seeds name (the
  // example and built-in kernels' .cl files), removed at exit.
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string tmpl = (std::filesystem::temp_directory_path() / "wstune-fuzz-t1-XXXXXX").string();
      const char* made = mkdtemp(tmpl.data());
      if (!made) bug("tuning_file", "cannot create a temporary directory");
      path = made;
      std::error_code ec;
      for (const char* sub : {"share/examples/kernels", "kernels"}) {
        for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(WSTUNE_SOURCE_DIR) / sub, ec)) {
          if (e.path().extension() == ".cl") std::filesystem::copy_file(e.path(), path / e.path().filename(), ec);
        }
      }
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  const std::string path = (dir.path / "tuning.json").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)read_tuning_file(path);
  } catch (const UsageError& e) {
    check_message(name, e);
  } catch (const std::exception& e) {
    bug(name, std::string("failed with something other than UsageError: ") + e.what());
  }
}

}  // namespace wstune::fuzz
