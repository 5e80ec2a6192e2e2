// The store across real processes: a tuning session SIGKILLed mid-way
// resumes without measuring a configuration twice or losing one, and four
// processes writing trials at once lose nothing. The children are this very
// executable, started with fork/exec and WSTUNE_STORE_CHILD set.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "test_store_util.hpp"

using namespace wstune;
using wstune::test::fake_device;
using wstune::test::TempDir;
using wstune::test::trial;

namespace {

constexpr std::size_t kConfigs = 400;  // configurations of the "tuning session"
const KernelKey kKernel{"matmul", "abc", ""};

// Child: WSTUNE_STORE_CHILD="resume DB" measures configurations 1..kConfigs
// of one resumable session, skipping measured ones, printing each committed
// one; "writer DB I N" writes N trials into its own session I.
int child_main(const std::string& role) {
  char mode[16] = {}, db[4096] = {};
  unsigned index = 0, n = 0;
  if (std::sscanf(role.c_str(), "%15s %4095s %u %u", mode, db, &index, &n) < 2) return 3;
  Store s(db, {.read_only = false, .busy_timeout_ms = 30000});
  if (std::string(mode) == "resume") {
    const auto sess = s.open_session(fake_device("H100"), kKernel, {Extent{4096, 1, 1}, ""}, {"exhaustive", {}, {}});
    for (std::size_t x = 1; x <= kConfigs; ++x) {
      if (s.measured(sess.id, Extent{x, 1, 1})) continue;
      if (!s.add_trial(sess.id, trial(x, 1.0 + static_cast<double>(x)))) return 4;  // measured twice
      std::printf("%zu\n", x);
      std::fflush(stdout);
      usleep(1000);  // so that the parent's SIGKILL lands mid-session
    }
    s.end_session(sess.id);
    return 0;
  }
  const auto sess = s.open_session(fake_device("H100"), kKernel, {Extent{1024, 1, 1}, ""},
                                   {"writer-" + std::to_string(index), {}, {}}, false);
  for (unsigned x = 1; x <= n; ++x) {
    if (x % 2) {
      s.add_trial(sess.id, trial(x, 1.0));
    } else {  // every other one in a small batch of one, same code path as batches
      s.add_trials(sess.id, {trial(x, 1.0)});
    }
  }
  return 0;
}

[[maybe_unused]] const bool child_ran = [] {
  if (const char* role = std::getenv("WSTUNE_STORE_CHILD")) std::_Exit(child_main(role));
  return false;
}();

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;  // the child's stdout
};

Child spawn(const std::string& role) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe");
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("WSTUNE_STORE_CHILD", role.c_str(), 1);
    char exe[] = "/proc/self/exe";
    char* argv[] = {exe, nullptr};
    execv(exe, argv);
    std::_Exit(127);
  }
  close(fds[1]);
  c.out = fdopen(fds[0], "r");
  return c;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

TEST(StoreProcesses, SigkilledSessionResumesWithoutDuplicatesOrLosses) {
  TempDir tmp;
  const std::string db = tmp.file("resume.db");
  { Store init(db); }  // create it before the children race for it
  std::set<std::size_t> acknowledged;  // configurations the child said were committed
  Child c = spawn("resume " + db);
  char line[64];
  while (acknowledged.size() < 60 && std::fgets(line, sizeof line, c.out)) acknowledged.insert(std::stoul(line));
  kill(c.pid, SIGKILL);  // mid-loop, possibly mid-transaction
  EXPECT_EQ(wait_exit(c.pid), 128 + SIGKILL);
  while (std::fgets(line, sizeof line, c.out)) acknowledged.insert(std::stoul(line));
  std::fclose(c.out);
  ASSERT_GE(acknowledged.size(), 60u);
  ASSERT_LT(acknowledged.size(), kConfigs) << "the kill came too late to test anything";

  std::int64_t sid = 0;
  {
    Store s(db);
    EXPECT_TRUE(s.check().ok);
    const auto sessions = s.sessions();
    ASSERT_EQ(sessions.size(), 1u);
    EXPECT_FALSE(sessions[0].ended_at) << "killed sessions stay open for resuming";
    sid = sessions[0].id;
    for (std::size_t x : acknowledged) EXPECT_TRUE(s.measured(sid, Extent{x, 1, 1})) << "lost trial " << x;
  }
  Child r = spawn("resume " + db);
  std::set<std::size_t> second;
  while (std::fgets(line, sizeof line, r.out)) second.insert(std::stoul(line));
  std::fclose(r.out);
  EXPECT_EQ(wait_exit(r.pid), 0) << "exit 4 means a configuration was measured twice";
  for (std::size_t x : second) EXPECT_FALSE(acknowledged.count(x)) << x << " measured again after resume";

  Store s(db);
  EXPECT_EQ(s.sessions().size(), 1u) << "the resumed session is the same one";
  EXPECT_TRUE(s.session(sid)->ended_at);
  const auto trials = s.trials(sid);
  EXPECT_EQ(trials.size(), kConfigs);
  std::set<std::size_t> unique;
  for (const auto& t : trials) unique.insert(t.local->x);
  EXPECT_EQ(unique.size(), kConfigs);
}

TEST(StoreProcesses, FourConcurrentWritersLoseNothing) {
  TempDir tmp;
  const std::string db = tmp.file("many.db");
  { Store init(db); }
  constexpr unsigned kWriters = 4, kEach = 150;
  std::vector<Child> kids;
  for (unsigned i = 0; i < kWriters; ++i) kids.push_back(spawn("writer " + db + " " + std::to_string(i) + " " + std::to_string(kEach)));
  for (Child& c : kids) {
    std::fclose(c.out);
    EXPECT_EQ(wait_exit(c.pid), 0);
  }
  Store s(db);
  EXPECT_TRUE(s.check().ok);
  const auto sessions = s.sessions();
  ASSERT_EQ(sessions.size(), kWriters);
  for (const auto& sess : sessions) EXPECT_EQ(s.trial_count(sess.id), kEach) << sess.spec.strategy;
  EXPECT_EQ(s.trial_count(), static_cast<std::int64_t>(kWriters * kEach));
}
