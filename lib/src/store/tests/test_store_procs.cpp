// The store across real processes: a tuning session SIGKILLed mid-way
// resumes without measuring a configuration twice or losing one, four
// processes writing trials at once lose nothing, and a session whose writer
// is alive is never resumed by another process (issue 17). The children are
// this very executable, started with fork/exec and WSTUNE_STORE_CHILD set.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

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
  if (std::string(mode) == "hold") {
    // Opens (resuming if it can) the session of the "resume" key, says its
    // id, and stays alive, writing nothing, until killed.
    const auto sess =
        s.open_session(fake_device("H100"), kKernel, {Extent{4096, 1, 1}, ""}, {"exhaustive", {}, {}}, index == 0);
    std::printf("%lld %d\n", static_cast<long long>(sess.id), sess.resumed ? 1 : 0);
    std::fflush(stdout);
    for (;;) pause();
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
  { Store init(db); }                  // create it before the children race for it
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
  for (unsigned i = 0; i < kWriters; ++i)
    kids.push_back(spawn("writer " + db + " " + std::to_string(i) + " " + std::to_string(kEach)));
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

namespace {
struct Held {
  Child child;
  std::int64_t id = 0;
  bool resumed = false;
};
// A child that opens the "resume" key's session (resume = true unless
// `no_resume`) and stays alive without writing.
Held hold(const std::string& db, bool no_resume = false) {
  Held h{spawn("hold " + db + (no_resume ? " 1" : " 0")), 0, false};
  long long id = 0;
  int resumed = 0;
  if (std::fscanf(h.child.out, "%lld %d", &id, &resumed) != 2)
    throw std::runtime_error("the holding child said nothing");
  h.id = id;
  h.resumed = resumed != 0;
  return h;
}
const DeviceInfo kDevice = fake_device("H100");
const ProblemKey kProblem{Extent{4096, 1, 1}, ""};
const SessionSpec kSpec{"exhaustive", {}, {}};
}  // namespace

// Issue 17: five `wstune tune` processes all resumed one live session. A
// session whose writer is alive (another process, same host) is never
// resumed; once the writer is killed, the session is taken over, and its
// best is recorded by its writer only.
TEST(StoreProcesses, LiveSessionIsNeverResumedByAnotherProcess) {
  TempDir tmp;
  const std::string db = tmp.file("live.db");
  { Store init(db); }
  Held a = hold(db);
  EXPECT_FALSE(a.resumed);
  Store s(db);
  const auto mine = s.open_session(kDevice, kKernel, kProblem, kSpec);
  EXPECT_FALSE(mine.resumed) << "resumed the session of live process " << a.child.pid;
  EXPECT_NE(mine.id, a.id);
  ASSERT_TRUE(s.session(a.id));
  EXPECT_TRUE(s.session_live(*s.session(a.id)));
  EXPECT_EQ(s.session(a.id)->pid, a.child.pid);
  // Its best is the writer's to record.
  BestConfig b;
  b.device_fingerprint = kDevice.fingerprint();
  b.kernel = kKernel;
  b.problem = kProblem;
  b.local = Extent{64, 1, 1};
  b.median_ms = 1.0;
  b.session_id = a.id;
  EXPECT_THROW(s.record_best(b), StoreError);
  s.add_trial(a.id, trial(64, 1.0));
  EXPECT_THROW(s.derive_best(a.id), StoreError);
  s.end_session(a.id);
  EXPECT_FALSE(s.session(a.id)->ended_at) << "another process ended a live session";
  // A second holder with --no-resume semantics, then one that resumes: it
  // takes neither live session.
  Held c = hold(db, true);
  Held d = hold(db);
  EXPECT_FALSE(d.resumed);
  EXPECT_NE(d.id, a.id);
  EXPECT_NE(d.id, c.id);
  // Killed, not yet reaped (a zombie is not alive): the session is resumable
  // and resuming takes it over. Of the unfinished sessions of dead writers
  // the newest is resumed: kill a and d, keep c.
  s.end_session(mine.id);
  kill(a.child.pid, SIGKILL);
  kill(d.child.pid, SIGKILL);
  // SIGKILL is delivered asynchronously: wait (at most 5 s) for both to die.
  auto either_live = [&] { return s.session_live(*s.session(a.id)) || s.session_live(*s.session(d.id)); };
  for (int i = 0; i < 500 && either_live(); ++i) usleep(10'000);
  EXPECT_FALSE(s.session_live(*s.session(a.id)));
  const auto taken = s.open_session(kDevice, kKernel, kProblem, kSpec);
  EXPECT_TRUE(taken.resumed);
  EXPECT_EQ(taken.id, d.id);
  EXPECT_EQ(taken.pid, getpid());
  b.session_id = taken.id;
  EXPECT_GT(s.record_best(b), 0) << "the new writer records the best";
  EXPECT_EQ(wait_exit(a.child.pid), 128 + SIGKILL);
  EXPECT_EQ(wait_exit(d.child.pid), 128 + SIGKILL);
  kill(c.child.pid, SIGKILL);
  EXPECT_EQ(wait_exit(c.child.pid), 128 + SIGKILL);
  for (Held* h : {&a, &c, &d}) std::fclose(h->child.out);
}

// A pid that names another process now (reused after the writer died) or a
// writer on another host whose heartbeat is stale: not live.
TEST(StoreProcesses, ReusedPidsAndStaleHeartbeatsAreNotLive) {
  TempDir tmp;
  const std::string db = tmp.file("beat.db");
  Store s(db);
  const auto sess = s.open_session(kDevice, kKernel, kProblem, kSpec);
  auto edit = [&](const std::string& host, long long pid, const std::string& beat) {
    SQLite::Database raw(db, SQLite::OPEN_READWRITE);
    SQLite::Statement u(raw, "UPDATE sessions SET host=?, pid=?, heartbeat_at=? WHERE id=?");
    u.bind(1, host);
    u.bind(2, static_cast<std::int64_t>(pid));
    u.bind(3, beat);
    u.bind(4, static_cast<std::int64_t>(sess.id));
    u.exec();
    return *s.session(sess.id);
  };
  const std::string host = s.session(sess.id)->host;
  // Our parent process is alive, but it started long after this heartbeat.
  EXPECT_FALSE(s.session_live(edit(host, getppid(), "2001-01-01T00:00:00.000Z")));
  EXPECT_TRUE(s.session_live(edit(host, getppid(), "2999-01-01T00:00:00.000Z")));
  // Another host: the heartbeat decides.
  EXPECT_TRUE(s.session_live(edit("elsewhere.example", 12345, "2999-01-01T00:00:00.000Z")));
  EXPECT_FALSE(s.session_live(edit("elsewhere.example", 12345, "2001-01-01T00:00:00.000Z")));
  // Live elsewhere: not resumed, and this process cannot refresh its beat.
  edit("elsewhere.example", 12345, "2999-01-01T00:00:00.000Z");
  EXPECT_FALSE(s.heartbeat(sess.id));
  const auto own = s.open_session(kDevice, kKernel, kProblem, kSpec);
  EXPECT_FALSE(own.resumed);
  s.end_session(own.id);
  // Stale elsewhere: resumed and taken over.
  edit("elsewhere.example", 12345, "2001-01-01T00:00:00.000Z");
  const auto again = s.open_session(kDevice, kKernel, kProblem, kSpec);
  EXPECT_TRUE(again.resumed);
  EXPECT_EQ(again.id, sess.id);
  EXPECT_EQ(again.host, host);
  EXPECT_TRUE(s.heartbeat(sess.id));
}
