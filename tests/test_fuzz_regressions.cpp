// Every seed of the fuzz corpus and every crash input the fuzzers found
// (fuzz/corpus/NAME, fuzz/regressions/NAME) through the same entry point
// the libFuzzer binary NAME calls (fuzz/fuzz.hpp): an input that makes an
// entry abort fails this test (issue 17, docs/results/fuzz.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/json_input.hpp"
#include "fuzz.hpp"
#include "wstune/error.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "README.md") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs every input of fuzz/KIND/NAME through target NAME; returns how many.
std::size_t run_all(std::string_view kind) {
  std::size_t n = 0;
  for (const auto& t : wstune::fuzz::kTargets) {
    for (const fs::path& f : files(fs::path(WSTUNE_FUZZ_DIR) / std::string(kind) / std::string(t.name))) {
      SCOPED_TRACE(f.string());
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      t.run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());  // aborts on a bug
      ++n;
    }
  }
  std::cout << n << " " << kind << " input(s) handled\n";
  return n;
}

// The inputs kept under fuzz/KIND/ (any target's folder, README.md aside),
// counted without the targets' list: an input of a folder no target reads
// is one the test would skip.
std::size_t kept_inputs(std::string_view kind) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(WSTUNE_FUZZ_DIR) / std::string(kind)))
    n += e.is_regular_file() && e.path().filename() != "README.md";
  return n;
}

}  // namespace

// Every crash input kept in fuzz/regressions/ (issue 17's findings) runs:
// the folder is there, holds inputs, and each is read by its target.
TEST(FuzzRegressions, EveryCrashInputIsHandled) {
  ASSERT_TRUE(fs::is_directory(fs::path(WSTUNE_FUZZ_DIR) / "regressions")) << WSTUNE_FUZZ_DIR;
  const std::size_t kept = kept_inputs("regressions");
  EXPECT_GT(kept, 0u) << "fuzz/regressions/ holds no crash input";
  EXPECT_EQ(run_all("regressions"), kept) << "a crash input lies in a folder no fuzz target reads";
}

TEST(FuzzRegressions, EverySeedIsHandled) {
  const std::size_t n = run_all("corpus");
  EXPECT_GE(n, std::size(wstune::fuzz::kTargets)) << "every target has a seed corpus";
  EXPECT_EQ(n, kept_inputs("corpus")) << "a seed lies in a folder no fuzz target reads";
}

TEST(FuzzRegressions, EveryTargetHasACorpus) {
  for (const auto& t : wstune::fuzz::kTargets) {
    EXPECT_FALSE(files(fs::path(WSTUNE_FUZZ_DIR) / "corpus" / std::string(t.name)).empty()) << t.name;
  }
}

// nlohmann's parser ends the text at a NUL byte; wstune refuses the text
// instead of reading what comes before it.
TEST(JsonInput, NulByteIsRefusedWithItsOffset) {
  using namespace std::string_view_literals;
  try {
    (void)wstune::parse_json_input("{\"a\": 1}\0[[["sv, "jobs.json");
    FAIL() << "a NUL byte was accepted";
  } catch (const wstune::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("jobs.json is not valid JSON: byte 8 is a NUL byte"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(wstune::parse_json_input("{\"a\": 1}", "jobs.json")["a"], 1);
}
