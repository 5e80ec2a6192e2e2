// The child-process module (evaluate/child_process.hpp) without OpenCL: a
// child that answers, one that hangs past the deadline, one killed by a
// signal, one whose body throws, and malformed or cut frames.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "evaluate/child_process.hpp"

using namespace wstune;
using namespace std::chrono_literals;

namespace {

SocketClock::time_point in(std::chrono::milliseconds ms) {
  return SocketClock::now() + ms;
}

// A child that answers each frame {"n": k} with {"n": k + 1} until the parent closes its end.
int echo_plus_one(int fd) {
  for (;;) {
    nlohmann::json m;
    if (recv_frame(fd, m, std::nullopt) != SocketRead::ok) return 0;
    if (!send_frame(fd, nlohmann::json{{"n", m.at("n").get<int>() + 1}})) return 1;
  }
}

// A child that never answers and never reads.
int hang_forever(int) {
  for (;;) ::pause();
}

TEST(ChildProcess, AnswersFramesAndExitsWhenTheParentCloses) {
  ChildProcess child = ChildProcess::start(echo_plus_one, "the echo child");
  ASSERT_TRUE(child.running());
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(send_frame(child.fd(), nlohmann::json{{"n", k}}));
    nlohmann::json answer;
    ASSERT_EQ(recv_frame(child.fd(), answer, in(60'000ms)), SocketRead::ok);
    EXPECT_EQ(answer.at("n").get<int>(), k + 1);
  }
  EXPECT_EQ(child.stop(60'000ms), "exited with status 0");
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.fd(), -1);
}

TEST(ChildProcess, AChildSeesItsEndWhileALaterChildHoldsACopyOfThisEnd) {
  ChildProcess first = ChildProcess::start(echo_plus_one, "the echo child");
  ChildProcess later = ChildProcess::start(hang_forever, "a child");  // fork copied first's parent end
  // Without the shutdown the first child would read on until the grace's
  // SIGKILL (the later child keeps the socket open).
  EXPECT_EQ(first.stop(60'000ms), "exited with status 0");
  EXPECT_EQ(later.kill(), "killed by signal 9 (Killed)");
}

TEST(ChildProcess, StopInBackgroundReturnsAtOnceAndTheChildIsStillReaped) {
  ChildProcess child = ChildProcess::start(echo_plus_one, "the echo child");
  const pid_t pid = child.pid();
  child.stop_in_background(60'000ms);
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.fd(), -1);
  // The background thread reaps it: the pid stops naming a process (no zombie left).
  bool gone = false;
  for (int i = 0; i < 6000 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
}

TEST(ChildProcess, TheBodysReturnValueIsTheExitStatusAndAThrowIsThree) {
  ChildProcess seven = ChildProcess::start([](int) { return 7; }, "a child");
  EXPECT_EQ(seven.stop(60'000ms), "exited with status 7");
  ChildProcess thrower = ChildProcess::start([](int) -> int { throw std::runtime_error("no"); }, "a child");
  EXPECT_EQ(thrower.stop(60'000ms), "exited with status 3");
}

TEST(ChildProcess, AChildThatHangsPastTheDeadlineTimesOutAndIsKilled) {
  ChildProcess child = ChildProcess::start(hang_forever, "a hanging child");
  ASSERT_TRUE(send_frame(child.fd(), nlohmann::json{{"n", 1}}));
  nlohmann::json answer = "untouched";
  EXPECT_EQ(recv_frame(child.fd(), answer, in(100ms)), SocketRead::timeout);
  EXPECT_EQ(answer, "untouched");
  EXPECT_EQ(child.kill(), "killed by signal 9 (Killed)");
  EXPECT_FALSE(child.running());
}

TEST(ChildProcess, ReapingAChildThatIgnoresTheClosedSocketEndsInSigkill) {
  ChildProcess child = ChildProcess::start(hang_forever, "a hanging child");
  EXPECT_EQ(child.stop(10ms), "killed by signal 9 (Killed)");
}

TEST(ChildProcess, AChildKilledByASignalIsAClosedSocketAndNamesTheSignal) {
  ChildProcess child = ChildProcess::start(
      [](int) {
        ::raise(SIGTERM);
        return 0;
      },
      "a dying child");
  nlohmann::json answer;
  EXPECT_EQ(recv_frame(child.fd(), answer, in(60'000ms)), SocketRead::closed);
  const std::string exit = child.stop(60'000ms);
  EXPECT_EQ(exit.rfind("killed by signal 15 (", 0), 0u) << exit;
}

TEST(ChildProcess, AFrameThatIsNotJsonIsMalformedAndACutFrameIsClosed) {
  ChildProcess bad = ChildProcess::start(
      [](int fd) {
        const std::string text = "{oops";
        const auto len = static_cast<std::uint32_t>(text.size());
        return send_all(fd, &len, sizeof len) && send_all(fd, text.data(), text.size()) ? 0 : 1;
      },
      "a child");
  nlohmann::json answer;
  EXPECT_EQ(recv_frame(bad.fd(), answer, in(60'000ms)), SocketRead::malformed);
  EXPECT_EQ(bad.stop(60'000ms), "exited with status 0");

  ChildProcess cut = ChildProcess::start(
      [](int fd) {
        const std::uint32_t len = 100;  // announces 100 bytes, sends 2
        return send_all(fd, &len, sizeof len) && send_all(fd, "{}", 2) ? 0 : 1;
      },
      "a child");
  EXPECT_EQ(recv_frame(cut.fd(), answer, in(60'000ms)), SocketRead::closed);
  EXPECT_EQ(cut.stop(60'000ms), "exited with status 0");
}

TEST(ChildProcess, SendingToAChildThatIsGoneFails) {
  ChildProcess child = ChildProcess::start([](int) { return 0; }, "a child");
  nlohmann::json answer;
  ASSERT_EQ(recv_frame(child.fd(), answer, in(60'000ms)), SocketRead::closed);
  EXPECT_FALSE(send_frame(child.fd(), nlohmann::json{{"n", 1}}));
}

TEST(ChildProcess, ATakenSocketIsTheCallersAndMovesKeepOneOwner) {
  ChildProcess child = ChildProcess::start(echo_plus_one, "the echo child");
  ChildProcess moved = std::move(child);
  EXPECT_FALSE(child.running());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  ASSERT_TRUE(moved.running());
  const int fd = moved.take_fd();
  EXPECT_EQ(moved.fd(), -1);
  ASSERT_TRUE(send_frame(fd, nlohmann::json{{"n", 41}}));
  nlohmann::json answer;
  ASSERT_EQ(recv_frame(fd, answer, in(60'000ms)), SocketRead::ok);
  EXPECT_EQ(answer.at("n").get<int>(), 42);
  ::close(fd);  // the child's next read ends: it exits 0
  EXPECT_EQ(moved.stop(60'000ms), "exited with status 0");
}

TEST(DescribeExit, NamesSignalsAndStatuses) {
  EXPECT_EQ(describe_exit(0), "exited with status 0");
  EXPECT_EQ(describe_exit(2 << 8), "exited with status 2");
  EXPECT_EQ(describe_exit(SIGKILL), "killed by signal 9 (Killed)");
}

}  // namespace
