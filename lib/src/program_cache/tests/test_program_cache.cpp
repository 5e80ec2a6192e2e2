// The program binary cache (program_cache/program_cache.hpp): entries on
// disk (hit, miss, torn or foreign entries, concurrent writers) and
// build_program() on real OpenCL (PoCL): a second build loads the binary, a
// corrupt binary is rebuilt from source and overwritten, a compile error is
// answered from the cache.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "program_cache/program_cache.hpp"
#include "runner/runner.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/device.hpp"

namespace {

using namespace wstune;
namespace fs = std::filesystem;

// A fresh folder for one test.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("wstune-program-cache-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  return d;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(ProgramCache, StoresAndLoadsBinariesAndFailures) {
  const ProgramCache cache(fresh_dir("roundtrip"));
  EXPECT_FALSE(cache.load("key a").has_value());  // nothing yet: a miss
  const std::string binary("\0\x01\x02 binary\nwith lines", 22);
  ASSERT_TRUE(cache.store("key a", CachedProgram{binary, false, {}}));
  const auto hit = cache.load("key a");
  ASSERT_TRUE(hit.has_value());
  EXPECT_FALSE(hit->failed);
  EXPECT_EQ(hit->binary, binary);
  ASSERT_TRUE(cache.store("key b", CachedProgram{{}, true, "error: no such thing"}));
  const auto failed = cache.load("key b");
  ASSERT_TRUE(failed.has_value());
  EXPECT_TRUE(failed->failed);
  EXPECT_EQ(failed->log, "error: no such thing");
  // Only entries are left behind: no temporary files.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache.dir())) {
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
    ++files;
  }
  EXPECT_EQ(files, 2u);
}

TEST(ProgramCache, TornForeignOrGarbageEntriesAreMisses) {
  const ProgramCache cache(fresh_dir("torn"));
  ASSERT_TRUE(cache.store("key a", CachedProgram{"0123456789", false, {}}));
  const std::string whole = read_all(cache.path_of("key a"));
  // Truncated anywhere: a miss, never a shorter binary.
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, whole.size() / 2, whole.size() - 1}) {
    write_all(cache.path_of("key a"), whole.substr(0, n));
    EXPECT_FALSE(cache.load("key a").has_value()) << n << " bytes";
  }
  write_all(cache.path_of("key a"), whole + "trailing");
  EXPECT_FALSE(cache.load("key a").has_value());
  write_all(cache.path_of("key a"), "not an entry at all");
  EXPECT_FALSE(cache.load("key a").has_value());
  // Another key's entry in this key's file (a hash collision): a miss.
  fs::copy_file(cache.path_of("key a"), cache.path_of("key c"), fs::copy_options::overwrite_existing);
  ASSERT_TRUE(cache.store("key a", CachedProgram{"0123456789", false, {}}));
  fs::copy_file(cache.path_of("key a"), cache.path_of("key c"), fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.load("key c").has_value());
  EXPECT_TRUE(cache.load("key a").has_value());
}

TEST(ProgramCache, OffCacheStoresNothing) {
  const ProgramCache off;
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.store("key", CachedProgram{"x", false, {}}));
  EXPECT_FALSE(off.load("key").has_value());
}

TEST(ProgramCache, DefaultDirFollowsTheEnvironment) {
  const char* old = std::getenv("WSTUNE_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("WSTUNE_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(ProgramCache::default_dir(), fs::path("/some/where"));
  ::setenv("WSTUNE_CACHE_DIR", "off", 1);
  EXPECT_TRUE(ProgramCache::default_dir().empty());
  ::unsetenv("WSTUNE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(ProgramCache::default_dir(), fs::path("/xdg/wstune/programs"));
  if (old) ::setenv("WSTUNE_CACHE_DIR", saved.c_str(), 1);
}

// Several processes write the same key at once, with binaries of different
// sizes, while others read: every load is a miss or one writer's whole binary.
TEST(ProgramCache, ConcurrentWritersNeverTearAnEntry) {
  const ProgramCache cache(fresh_dir("concurrent"));
  auto binary_of = [](int w) { return std::string(1000 + 50'000 * static_cast<std::size_t>(w), char('a' + w)); };
  std::vector<pid_t> children;
  for (int w = 0; w < 6; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      for (int i = 0; i < 40; ++i) {
        if (w % 2 == 0) {
          ok = cache.store("shared key", CachedProgram{binary_of(w), false, {}}) && ok;
        } else if (const auto hit = cache.load("shared key")) {
          const int writer = hit->binary.empty() ? -1 : hit->binary[0] - 'a';
          ok = writer >= 0 && writer % 2 == 0 && hit->binary == binary_of(writer) && ok;
        }
      }
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "process " << pid;
  }
  const auto last = cache.load("shared key");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->binary, binary_of(last->binary[0] - 'a'));
}

// ---- build_program on PoCL ----

struct OpenCl {
  Device device = enumerate_devices().at(0);
  cl::Context context{device.device};
};

constexpr const char* kSource = "__kernel void add(__global float* x) { x[get_global_id(0)] += VALUE; }\n";

TEST(BuildProgram, SecondBuildLoadsTheBinary) {
  OpenCl cl;
  const ProgramCache cache(fresh_dir("build"));
  const std::string options = "-cl-std=CL1.2 -DVALUE=2.0f";
  const ProgramBuildCounts before = program_build_counts();
  const ProgramBuild first = build_program(cl.context, cl.device.device, kSource, options, &cache);
  ASSERT_EQ(first.code, CL_SUCCESS) << first.log;
  EXPECT_EQ(first.origin, ProgramOrigin::source);
  const std::string key = ProgramCache::key(cl.device.device, options, kSource);
  EXPECT_TRUE(cache.load(key).has_value());
  const ProgramBuild second = build_program(cl.context, cl.device.device, kSource, options, &cache);
  ASSERT_EQ(second.code, CL_SUCCESS) << second.log;
  EXPECT_EQ(second.origin, ProgramOrigin::binary);
  cl_int err = CL_SUCCESS;
  cl::Kernel k(second.program, "add", &err);  // the loaded program has its kernel
  EXPECT_EQ(err, CL_SUCCESS);
  // Other options or another source: another key, built from source.
  EXPECT_EQ(build_program(cl.context, cl.device.device, kSource, "-cl-std=CL1.2 -DVALUE=3.0f", &cache).origin,
            ProgramOrigin::source);
  EXPECT_NE(ProgramCache::key(cl.device.device, options, std::string(kSource) + " "), key);
  const ProgramBuildCounts after = program_build_counts();
  EXPECT_EQ(after.source - before.source, 2u);
  EXPECT_EQ(after.binary - before.binary, 1u);
}

TEST(BuildProgram, CorruptBinaryIsRebuiltFromSourceAndOverwritten) {
  OpenCl cl;
  const ProgramCache cache(fresh_dir("corrupt"));
  const std::string options = "-cl-std=CL1.2 -DVALUE=4.0f";
  const std::string key = ProgramCache::key(cl.device.device, options, kSource);
  // A well-formed entry whose binary no driver loads.
  ASSERT_TRUE(cache.store(key, CachedProgram{"this is no program binary", false, {}}));
  const ProgramBuildCounts before = program_build_counts();
  const ProgramBuild b = build_program(cl.context, cl.device.device, kSource, options, &cache);
  ASSERT_EQ(b.code, CL_SUCCESS) << b.log;
  EXPECT_EQ(b.origin, ProgramOrigin::source);
  EXPECT_EQ(program_build_counts().rejected - before.rejected, 1u);
  EXPECT_NE(cache.load(key)->binary, "this is no program binary");
  EXPECT_EQ(build_program(cl.context, cl.device.device, kSource, options, &cache).origin, ProgramOrigin::binary);
  // A torn file is a miss too.
  write_all(cache.path_of(key), "wstune-program 1\nkey 3\nabc");
  EXPECT_EQ(build_program(cl.context, cl.device.device, kSource, options, &cache).origin, ProgramOrigin::source);
}

TEST(BuildProgram, CompileErrorIsAnsweredFromTheCache) {
  OpenCl cl;
  const ProgramCache cache(fresh_dir("failure"));
  const std::string options = "-cl-std=CL1.2";  // VALUE undefined: does not compile
  const ProgramBuild first = build_program(cl.context, cl.device.device, kSource, options, &cache);
  EXPECT_EQ(first.code, CL_BUILD_PROGRAM_FAILURE);
  EXPECT_EQ(first.origin, ProgramOrigin::source);
  EXPECT_NE(first.log.find("VALUE"), std::string::npos) << first.log;
  const ProgramBuild again = build_program(cl.context, cl.device.device, kSource, options, &cache);
  EXPECT_EQ(again.code, CL_BUILD_PROGRAM_FAILURE);
  EXPECT_EQ(again.origin, ProgramOrigin::cached_failure);
  EXPECT_EQ(again.log, first.log);
}

TEST(BuildProgram, WithoutCacheEveryBuildIsFromSource) {
  OpenCl cl;
  const ProgramCache off;
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(build_program(cl.context, cl.device.device, kSource, "-DVALUE=1.0f", &off).origin, ProgramOrigin::source);
}

}  // namespace

namespace {

TEST(DeviceRunner, ForgottenProgramsAreLoadedAgainFromTheCacheAndTheNewestKept) {
  ProgramCache::configure(fresh_dir("forget"));
  const auto spec = load_tuning_file(std::string(WSTUNE_TEST_DATA_DIR) + "/pool_scale.json");
  DeviceRunner runner(select_device(enumerate_devices(), "default"), *spec, "");
  std::vector<Problem> problems;  // not PER=1: the reference parameters, whose program is always kept
  for (int per : {2, 4, 8}) problems.push_back(with_params(spec->paper_size(), {{"MODE", 0}, {"PER", per}}));
  for (const Problem& p : problems) ASSERT_NE(runner.variant(p, nullptr), nullptr);
  const ProgramBuildCounts before = program_build_counts();
  runner.forget_programs(1);                                 // keeps the newest (PER=8)
  ASSERT_NE(runner.variant(problems[2], nullptr), nullptr);  // kept: nothing built
  EXPECT_EQ(program_build_counts().binary, before.binary);
  ASSERT_NE(runner.variant(problems[0], nullptr), nullptr);  // forgotten: its binary loaded, not compiled
  EXPECT_EQ(program_build_counts().binary, before.binary + 1);
  EXPECT_EQ(program_build_counts().source, before.source);
}

}  // namespace
