// wstuned over TCP (issue 40): the frame form over a stream socket
// (StreamConnection: whole messages, partial reads, malformed frames) and
// the master's TcpHub with a worker's TcpClient on the loopback interface
// (round trip with buffers, a peer that closes, a bye before closing,
// receive timeouts, addresses). Real sockets, no MPI, no OpenCL.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include <fmt/format.h>

#include "transport/stream_connection.hpp"
#include "transport/tcp_communicator.hpp"

using namespace wstune;
using namespace wstune::daemon;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {
// The bytes of `m` as a frame: what StreamConnection::queue() writes.
std::vector<std::uint8_t> frame_of(const Message& m) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  {
    StreamConnection out(sv[0]);
    out.queue(m);
    EXPECT_TRUE(out.write_some());
    EXPECT_FALSE(out.wants_write());
  }  // closes sv[0]
  std::vector<std::uint8_t> bytes;
  std::uint8_t buf[4096];
  ssize_t n = 0;
  while ((n = ::read(sv[1], buf, sizeof buf)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  ::close(sv[1]);
  return bytes;
}

// A hub on the loopback interface, any port, and a client connected to it.
struct Pair {
  TcpHub hub{Endpoint{"127.0.0.1", 0}, nullptr};
  TcpClient client{Endpoint{"127.0.0.1", hub.port()}, milliseconds(5000)};
};
}  // namespace

TEST(StreamConnection, AFrameReadInPiecesIsOneMessage) {
  const Message m{Tag::block_result, json{{"job", 7}}, {HostBuffer::of(std::vector<float>(1000, 2.5f)), HostBuffer{}}};
  const auto bytes = frame_of(m);
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  StreamConnection in(sv[1]);
  std::deque<Message> got;
  // Byte by byte through the 12-byte prefix and into the header, then the rest.
  for (std::size_t i = 0; i < 20; ++i) {
    ASSERT_EQ(::write(sv[0], &bytes[i], 1), 1);
    ASSERT_TRUE(in.read_some(got));
    EXPECT_TRUE(got.empty()) << "a message before its frame was whole, at byte " << i;
  }
  const std::size_t half = bytes.size() / 2;
  ASSERT_EQ(::write(sv[0], bytes.data() + 20, half - 20), static_cast<ssize_t>(half - 20));
  ASSERT_TRUE(in.read_some(got));
  EXPECT_TRUE(got.empty());
  ASSERT_EQ(::write(sv[0], bytes.data() + half, bytes.size() - half), static_cast<ssize_t>(bytes.size() - half));
  ASSERT_TRUE(in.read_some(got));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].tag, Tag::block_result);
  EXPECT_EQ(got[0].body, m.body);
  ASSERT_EQ(got[0].buffers.size(), 2u);
  EXPECT_EQ(got[0].buffers[0], m.buffers[0]);
  EXPECT_TRUE(got[0].buffers[1].empty());
  ::close(sv[0]);
  EXPECT_FALSE(in.read_some(got));
  EXPECT_EQ(in.error(), "the peer closed the connection");
}

TEST(StreamConnection, TwoFramesInOneReadAreTwoMessages) {
  auto bytes = frame_of(Message{Tag::hello, json{{"a", 1}}, {}});
  const auto second = frame_of(Message{Tag::bye, json::object(), {}});
  bytes.insert(bytes.end(), second.begin(), second.end());
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  StreamConnection in(sv[1]);
  ASSERT_EQ(::write(sv[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::deque<Message> got;
  ASSERT_TRUE(in.read_some(got));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].tag, Tag::hello);
  EXPECT_EQ(got[1].tag, Tag::bye);
  ::close(sv[0]);
}

TEST(StreamConnection, UnknownTagOrHugeHeaderIsAProtocolError) {
  for (const auto& [tag, len] : {std::pair<std::uint32_t, std::uint64_t>{99, 0}, {1, kMaxFrameHeader + 1}}) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    StreamConnection in(sv[1]);
    std::uint8_t prefix[12];
    std::memcpy(prefix, &tag, 4);
    std::memcpy(prefix + 4, &len, 8);
    ASSERT_EQ(::write(sv[0], prefix, sizeof prefix), 12);
    std::deque<Message> got;
    EXPECT_THROW(in.read_some(got), ProtocolError) << "tag " << tag << ", header " << len;
    ::close(sv[0]);
  }
}

TEST(TcpCommunicator, MessagesWithBuffersCrossBothWays) {
  Pair p;
  // 4 MB: more than the socket buffers hold, so it arrives in many reads.
  const HostBuffer big = HostBuffer::of(std::vector<float>(1 << 20, 1.25f));
  p.client.send(0, Message{Tag::hello, json{{"protocol", 5}}, {big}});
  // The client writes the rest as the hub reads (two processes in real use).
  bool flushed = false;
  std::thread writer([&] { flushed = p.client.flush(milliseconds(10000)); });
  const auto got = p.hub.recv(kAnySource, milliseconds(10000));
  writer.join();
  EXPECT_TRUE(flushed);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->source, 1);  // the first connection after rank 0
  EXPECT_EQ(p.hub.size(), 2);
  EXPECT_EQ(got->message.tag, Tag::hello);
  EXPECT_EQ(got->message.body, (json{{"protocol", 5}}));
  ASSERT_EQ(got->message.buffers.size(), 1u);
  EXPECT_EQ(got->message.buffers[0], big);
  EXPECT_EQ(p.hub.peer(1).rfind("tcp 127.0.0.1:", 0), 0u) << p.hub.peer(1);
  p.hub.send(1, Welcome{true, "", 1}.to_message());
  EXPECT_TRUE(p.hub.flush(milliseconds(5000)));
  const auto back = p.client.recv(0, milliseconds(10000));
  ASSERT_TRUE(back);
  EXPECT_EQ(Welcome::from(back->message).rank, 1);
}

TEST(TcpCommunicator, ReceiveTimesOutWithNothingSent) {
  Pair p;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(p.client.recv(0, milliseconds(50)));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(50));
  EXPECT_FALSE(p.hub.recv(kAnySource, milliseconds(50)));
  EXPECT_TRUE(p.client.connected(0));
}

TEST(TcpCommunicator, AClosedConnectionIsALostBye) {
  TcpHub hub{Endpoint{"127.0.0.1", 0}, nullptr};
  {
    TcpClient client{Endpoint{"127.0.0.1", hub.port()}, milliseconds(5000)};
    client.send(0, Message{Tag::hello, json::object(), {}});
    ASSERT_TRUE(client.flush(milliseconds(5000)));
    const auto hello = hub.recv(kAnySource, milliseconds(10000));
    ASSERT_TRUE(hello);
  }  // the worker's process ends: its socket closes
  const auto got = hub.recv(kAnySource, milliseconds(10000));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->source, 1);
  EXPECT_EQ(got->message.tag, Tag::bye);
  EXPECT_EQ(got->message.body.value("reason", ""), "lost: the peer closed the connection");
  EXPECT_FALSE(hub.connected(1));
  hub.send(1, Message{Tag::shutdown, json::object(), {}});  // dropped, no throw
  EXPECT_THROW(hub.send(2, Message{Tag::shutdown, json::object(), {}}), ProtocolError);
}

TEST(TcpCommunicator, AByeBeforeClosingIsNotReportedLost) {
  TcpHub hub{Endpoint{"127.0.0.1", 0}, nullptr};
  {
    TcpClient client{Endpoint{"127.0.0.1", hub.port()}, milliseconds(5000)};
    client.send(0, Message{Tag::bye, json{{"reason", "drained"}}, {}});
    ASSERT_TRUE(client.flush(milliseconds(5000)));
  }
  const auto got = hub.recv(kAnySource, milliseconds(10000));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->message.body.value("reason", ""), "drained");
  EXPECT_FALSE(hub.recv(kAnySource, milliseconds(300))) << "a second bye for a connection that said bye";
}

TEST(TcpCommunicator, TheWorkerSeesTheMasterGo) {
  auto hub = std::make_unique<TcpHub>(Endpoint{"127.0.0.1", 0}, nullptr);
  TcpClient client{Endpoint{"127.0.0.1", hub->port()}, milliseconds(5000)};
  client.send(0, Message{Tag::hello, json::object(), {}});
  ASSERT_TRUE(hub->recv(kAnySource, milliseconds(10000)));
  hub.reset();
  for (int i = 0; i < 100 && client.connected(0); ++i) client.recv(0, milliseconds(100));
  EXPECT_FALSE(client.connected(0));
  EXPECT_FALSE(client.error().empty());
}

TEST(TcpCommunicator, ConnectingToNobodyFailsNamingTheAddress) {
  const std::uint16_t port = TcpHub{Endpoint{"127.0.0.1", 0}, nullptr}.port();  // free again once closed
  try {
    TcpClient client{Endpoint{"127.0.0.1", port}, milliseconds(600)};
    FAIL() << "connected to a closed port";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("127.0.0.1:{}", port)), std::string::npos) << e.what();
  }
}

TEST(TcpCommunicator, EndpointsParseOrNameTheForm) {
  const Endpoint e = parse_endpoint("10.0.0.1:7470", "--listen");
  EXPECT_EQ(e.host, "10.0.0.1");
  EXPECT_EQ(e.port, 7470);
  EXPECT_EQ(parse_endpoint("node-3:0", "--listen").port, 0);
  for (const char* bad : {"10.0.0.1", ":80", "host:", "host:70000", "host:8x"}) {
    try {
      parse_endpoint(bad, "--connect");
      FAIL() << bad;
    } catch (const UsageError& err) {
      EXPECT_NE(std::string(err.what()).find("HOST:PORT"), std::string::npos) << err.what();
    }
  }
}
