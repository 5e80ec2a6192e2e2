// wstuned's wire protocol and the in-memory Communicator, without MPI and
// without OpenCL work: encode/decode, typed payloads, timeouts, and the
// master's registration checks (version mismatch, no device, silence).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "master/master.hpp"
#include "master/memory_sink.hpp"
#include "master/timeline.hpp"
#include "protocol/protocol.hpp"
#include "tests/support/in_memory_communicator.hpp"
#include "transport/communicator.hpp"

using namespace wstune;
using namespace wstune::daemon;
using nlohmann::json;

TEST(Protocol, EncodeDecodeRoundTripKeepsBodyAndBuffers) {
  Message m{Tag::run_block, json{{"a", 1}, {"s", "text"}}, {HostBuffer::of({1.5f, -2.f, 3.25f}), HostBuffer{}}};
  const auto bytes = encode(m);
  const Message back = decode(Tag::run_block, bytes);
  EXPECT_EQ(back.tag, Tag::run_block);
  EXPECT_EQ(back.body, m.body);
  ASSERT_EQ(back.buffers.size(), 2u);
  EXPECT_EQ(back.buffers[0], m.buffers[0]);
  EXPECT_TRUE(back.buffers[1].empty());
}

TEST(Protocol, TypedBuffersKeepTheirElementType) {
  HostBuffer ints(ElementType{ScalarType::i32, 1}, 3);
  ints.as<std::int32_t>()[1] = -7;
  HostBuffer vecs(ElementType{ScalarType::f64, 4}, 2);
  set_component(vecs, 7, 2.5);
  const Message m{Tag::run_block, json::object(), {ints, vecs}};
  const Message back = decode(Tag::run_block, encode(m));
  ASSERT_EQ(back.buffers.size(), 2u);
  EXPECT_EQ(back.buffers[0], ints);
  EXPECT_EQ(back.buffers[1], vecs);
  EXPECT_EQ(back.buffers[1].type().name(), "double4");
  EXPECT_DOUBLE_EQ(component(back.buffers[1], 7), 2.5);
  const auto [h, shapes] = decode_header(Tag::run_block, encode_header(m));
  EXPECT_EQ(shapes.at(0).type, (ElementType{ScalarType::i32, 1}));
  EXPECT_EQ(shapes.at(1).count, 2u);
  // An unknown element type in a header is a protocol error.
  auto bad = encode_header(Message{Tag::run_block, json::object(), {ints}});
  bad[bad.size() - 10] = 99;
  EXPECT_THROW(decode_header(Tag::run_block, bad), ProtocolError);
}

TEST(Protocol, TruncatedOrPaddedBytesAreProtocolErrors) {
  const auto bytes = encode(Message{Tag::hello, json{{"protocol", 1}}, {HostBuffer::of(std::vector<float>(10, 1.f))}});
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(decode(Tag::hello, std::span(bytes.data(), cut)), ProtocolError) << "cut at " << cut;
  }
  auto padded = bytes;
  padded.push_back(0);
  EXPECT_THROW(decode(Tag::hello, padded), ProtocolError);
}

TEST(Protocol, HeaderCarriesBodyAndBufferSizesButNoFloats) {
  Message m{Tag::block_result,
            json{{"job", 7}},
            {HostBuffer::of(std::vector<float>(1000, 2.f)), HostBuffer{}, HostBuffer::of({4.f})}};
  const auto header = encode_header(m);
  EXPECT_LT(header.size(), encode(m).size() - 1000 * sizeof(float) + 1);  // no floats in it
  const auto [back, sizes] = decode_header(Tag::block_result, header);
  EXPECT_EQ(back.tag, Tag::block_result);
  EXPECT_EQ(back.body, m.body);
  EXPECT_TRUE(back.buffers.empty());
  ASSERT_EQ(sizes.size(), 3u);
  EXPECT_EQ(sizes[0].count, 1000u);
  EXPECT_EQ(sizes[1].count, 0u);
  EXPECT_EQ(sizes[2].count, 1u);
  EXPECT_EQ(sizes[0].type, kFloat32);
  for (std::size_t cut : {std::size_t{0}, header.size() / 2, header.size() - 1}) {
    EXPECT_THROW(decode_header(Tag::block_result, std::span(header.data(), cut)), ProtocolError) << "cut at " << cut;
  }
  auto padded = header;
  padded.push_back(0);
  EXPECT_THROW(decode_header(Tag::block_result, padded), ProtocolError);
}

// Issue 14: one configuration to measure and its trial, failures as data.
TEST(Protocol, TrialsRoundTrip) {
  TrialRequest req{12, Configuration{json{{"WPTX", 2}}, Extent{16, 8, 2}}, TimingOptions{1, 3, 2.0, 50, 0.01, 40.0}};
  const TrialRequest req2 = TrialRequest::from(req.to_message());
  EXPECT_EQ(req2.job, 12u);
  EXPECT_EQ(req2.config, req.config);
  EXPECT_EQ(req2.timing.repetitions, 3u);
  EXPECT_DOUBLE_EQ(req2.timing.min_timed_ms, 2.0);
  EXPECT_EQ(req2.timing.max_repetitions, 50u);
  Trial t;
  t.params = json{{"WPTX", 2}};
  t.local = Extent{16, 8, 2};
  t.global = Extent{64, 64, 2};
  t.kernel.ms = {0.5, 0.25};
  t.verified = true;
  const Trial t2 = TrialAnswer::from(TrialAnswer{12, t}.to_message()).trial;
  EXPECT_EQ(t2.configuration(), t.configuration());
  EXPECT_EQ(t2.global, t.global);
  EXPECT_EQ(t2.kernel.ms, t.kernel.ms);
  EXPECT_TRUE(t2.verified);
  t.status = TrialStatus::timeout;
  t.error = "hung";
  t.local = std::nullopt;
  const Trial t3 = TrialAnswer::from(TrialAnswer{12, t}.to_message()).trial;
  EXPECT_EQ(t3.status, TrialStatus::timeout);
  EXPECT_EQ(t3.error, "hung");
  EXPECT_FALSE(t3.local.has_value());
  // A trial without its status, or with samples that are not numbers: a
  // protocol error naming the field.
  const auto answer = [](json trial) {
    return TrialAnswer::from(Message{Tag::trial_result, json{{"job", 12}, {"trial", std::move(trial)}}, {}});
  };
  EXPECT_THROW(answer(json{{"params", json::object()}, {"local", nullptr}, {"samples_ms", json::array()}}),
               ProtocolError);
  json bad = TrialAnswer{12, t}.to_message().body["trial"];
  bad["samples_ms"] = json{"fast"};
  try {
    answer(bad);
    ADD_FAILURE() << "a trial with a sample \"fast\" was read";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("trial_result.trial.samples_ms[0]"), std::string::npos) << e.what();
  }
}

TEST(Protocol, TagsHaveNamesAndKnownRange) {
  EXPECT_TRUE(is_known_tag(static_cast<int>(Tag::trial_result)));
  EXPECT_EQ(to_string(Tag::trial), "trial");
  EXPECT_EQ(to_string(Tag::block_result), "block_result");
  EXPECT_TRUE(is_known_tag(static_cast<int>(Tag::bye)));
  EXPECT_FALSE(is_known_tag(0));
  EXPECT_FALSE(is_known_tag(99));
  EXPECT_EQ(to_string(static_cast<Tag>(99)), "tag-99");
}

TEST(Protocol, TypedPayloadsRoundTrip) {
  RunBlock rb{7,
              2,
              "matmul",
              "64",
              Block{1, 16, 48},
              LocalPolicy::stored,
              Extent{8, 4, 2},
              1,
              5,
              9,
              json{{"TS", 16}},
              json{{"hash", "0123"}},
              1,
              ResultSlot{"/proc/1/fd/9", 4096, 77},
              {},
              false};
  const RunBlock rb2 = RunBlock::from(rb.to_message({HostBuffer::of(std::vector<float>(4, 2.f))}));
  EXPECT_EQ(rb2.seed, 9u);
  EXPECT_EQ(rb2.params, (json{{"TS", 16}}));
  EXPECT_EQ(rb2.kernel_file, (json{{"hash", "0123"}}));
  EXPECT_EQ(rb2.job, 7u);
  EXPECT_EQ(rb2.attempt, 2u);
  EXPECT_EQ(rb2.block, (Block{1, 16, 48}));
  EXPECT_EQ(rb2.policy, LocalPolicy::stored);
  ASSERT_TRUE(rb2.local.has_value());
  EXPECT_EQ(*rb2.local, (Extent{8, 4, 2}));
  EXPECT_EQ(rb2.repetitions, 5u);
  ASSERT_TRUE(rb2.result_slot.has_value());
  EXPECT_EQ(rb2.result_slot->path, "/proc/1/fd/9");
  EXPECT_EQ(rb2.result_slot->bytes, 4096u);
  EXPECT_EQ(rb2.result_slot->nonce, 77u);

  BlockResult br;
  br.job = 3;
  br.attempt = 1;
  br.block = Block{0, 0, 10};
  br.kernel.ms = {1.0, 2.0, 3.0};
  br.recv_ms = 0.5;
  br.h2d_wall_ms = 1.25;
  br.d2h_wall_ms = 2.5;
  const Message m = br.to_message({HostBuffer::of(std::vector<float>(10, 1.f))});
  const BlockResult br2 = BlockResult::from(m);
  EXPECT_EQ(br2.kernel.ms, br.kernel.ms);
  EXPECT_DOUBLE_EQ(br2.recv_ms, 0.5);
  EXPECT_DOUBLE_EQ(br2.h2d_wall_ms, 1.25);
  EXPECT_DOUBLE_EQ(br2.d2h_wall_ms, 2.5);
  EXPECT_FALSE(br2.local.has_value());
  EXPECT_EQ(m.buffers.at(0).size(), 10u);
  // Issue 38 (protocol 6): the joules a worker's sensor counted, or why none.
  EXPECT_FALSE(br2.joules.has_value());
  EXPECT_EQ(br2.energy_note, "the worker does not measure energy (protocol < 6)")
      << "absent on the wire: an older worker";
  br.joules = 12.5;
  br.energy_sensor = "nvml";
  const BlockResult measured = BlockResult::from(br.to_message({}));
  ASSERT_TRUE(measured.joules.has_value());
  EXPECT_DOUBLE_EQ(*measured.joules, 12.5);
  EXPECT_EQ(measured.energy_sensor, "nvml");
  EXPECT_EQ(measured.energy_note, "");
  br.joules.reset();
  br.energy_sensor.clear();
  br.energy_note = "no RAPL (/sys/class/powercap is absent)";
  const BlockResult unmeasured = BlockResult::from(br.to_message({}));
  EXPECT_FALSE(unmeasured.joules.has_value());
  EXPECT_EQ(unmeasured.energy_note, br.energy_note);
  EXPECT_THROW((void)BlockResult::from(Message{Tag::block_result,
                                               [&] {
                                                 json b = br.to_message({}).body;
                                                 b["joules"] = "many";
                                                 return b;
                                               }(),
                                               {}}),
               ProtocolError);

  const WorkRequest wr = WorkRequest::from(
      WorkRequest{9, "sort", "4096", 3, 0, 125.5, 5, json::object(), json()}.to_message(Tag::calibrate));
  EXPECT_EQ(wr.job, 9u);
  EXPECT_EQ(wr.seed, 5u);
  EXPECT_TRUE(wr.kernel_file.is_null());
  EXPECT_DOUBLE_EQ(wr.calibrate_budget_ms, 125.5);
  // A master that does not send a budget asks for the uncapped calibration.
  EXPECT_DOUBLE_EQ(WorkRequest::from(Message{Tag::calibrate, json{{"job", 1}, {"kernel", "sort"}, {"size", "64"}}, {}})
                       .calibrate_budget_ms,
                   0.0);

  WorkRequest tune{9, "sort", "4096", 3, 0, 0, 5, json::object(), json(), true};
  EXPECT_TRUE(WorkRequest::from(tune.to_message(Tag::tune)).energy);
  tune.energy = false;
  EXPECT_FALSE(WorkRequest::from(tune.to_message(Tag::tune)).energy);
  EXPECT_FALSE(WorkRequest::from(Message{Tag::tune, json{{"job", 1}, {"kernel", "sort"}, {"size", "64"}}, {}}).energy)
      << "absent on the wire (an older master): no energy";
  EXPECT_EQ(kProtocolVersion, 6);

  const WorkerError e2 = WorkerError::from(WorkerError{4, 1, TrialStatus::compile, "log"}.to_message());
  EXPECT_EQ(e2.status, TrialStatus::compile);
  EXPECT_EQ(e2.text, "log");

  DeviceInfo d;
  d.name = "Fake GPU";
  d.compute_units = 4;
  d.pe_per_cu = 48;
  Hello h;
  h.rank = 2;
  h.host = "node7";
  h.device = d;
  const Hello h2 = Hello::from(h.to_message());
  ASSERT_TRUE(h2.device.has_value());
  EXPECT_EQ(h2.device->total_pe(), 192u);
  EXPECT_EQ(h2.device->fingerprint(), d.fingerprint());
  EXPECT_EQ(h2.host, "node7");
}

TEST(Jobs, CalibrateBudgetIsAJobKeyWithACappedDefault) {
  EXPECT_DOUBLE_EQ(Job{}.calibrate_budget_ms, 250.0);
  const auto jobs = parse_jobs(
      json{{"defaults", {{"calibrate_budget_ms", 0}}},
           {"jobs", json::array({json{{"kernel", "sort"}}, json{{"kernel", "sort"}, {"calibrate_budget_ms", 40.5}}})}},
      Job{}, "t.json");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(jobs[0].calibrate_budget_ms, 0.0);
  EXPECT_DOUBLE_EQ(jobs[1].calibrate_budget_ms, 40.5);
  EXPECT_DOUBLE_EQ(to_json(jobs[1])["calibrate_budget_ms"].get<double>(), 40.5);
  EXPECT_THROW(parse_jobs(json::array({json{{"kernel", "sort"}, {"calibrate_budget_ms", -1}}}), Job{}, "t.json"),
               UsageError);
}

// Issue 38: the job keys "objectives" (as `wstune tune --objectives`) and
// "energy" (auto, on, off as `wstune tune --energy`); a job's JSON names
// "energy" only when not auto (run keys stay as they were).
TEST(Jobs, ObjectivesAndEnergyAreJobKeys) {
  const auto jobs = parse_jobs(json::array({json{{"kernel", "sort"}, {"objectives", "energy,time"}},
                                            json{{"kernel", "sort"}, {"energy", "on"}}}),
                               Job{}, "t.json");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].objectives, "energy,time");
  EXPECT_EQ(jobs[0].energy, "auto");
  EXPECT_FALSE(to_json(jobs[0]).contains("energy"));
  EXPECT_EQ(tune_request(jobs[0]).objectives, "energy,time");
  EXPECT_EQ(jobs[1].energy, "on");
  EXPECT_EQ(to_json(jobs[1])["energy"], "on");
  try {
    (void)parse_jobs(json::array({json{{"kernel", "sort"}, {"energy", "maybe"}}}), Job{}, "t.json");
    FAIL() << "a bad energy value is refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("energy 'maybe': use auto"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_energy_mode("off", "--energy"), "off");
  EXPECT_THROW((void)parse_energy_mode("On", "--energy"), UsageError);
}

// Issue 18: the job key `overlap` (chunks per worker block, default 2 as the
// CLI's --overlap; 1 = whole) travels in run_block; a master or worker
// without it reads 1 (whole blocks); a block_result names the chunks it ran.
TEST(Jobs, OverlapIsAJobKeyAndTravelsInRunBlock) {
  EXPECT_EQ(Job{}.overlap, 2u);
  const auto jobs =
      parse_jobs(json{{"defaults", {{"overlap", 4}}},
                      {"jobs", json::array({json{{"kernel", "sort"}}, json{{"kernel", "sort"}, {"overlap", 1}}})}},
                 Job{}, "t.json");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].overlap, 4u);
  EXPECT_EQ(jobs[1].overlap, 1u);
  EXPECT_EQ(to_json(jobs[0])["overlap"].get<unsigned>(), 4u);
  for (const json& bad : {json(0), json("two"), json(-1), json(1.5)}) {
    try {
      parse_jobs(json::array({json{{"kernel", "sort"}, {"overlap", bad}}}), Job{}, "t.json");
      ADD_FAILURE() << "overlap " << bad.dump() << " was accepted";
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("t.json: job 1"), std::string::npos) << msg;
      EXPECT_NE(msg.find("overlap"), std::string::npos) << msg;
    }
  }
  RunBlock rb;
  rb.overlap = 3;
  EXPECT_EQ(RunBlock::from(rb.to_message()).overlap, 3u);
  Message old = rb.to_message();
  old.body.erase("overlap");  // an older master
  EXPECT_EQ(RunBlock::from(old).overlap, 1u);
  BlockResult br;
  br.chunks = {Block{1, 0, 16}, Block{1, 16, 32}};
  br.overlap_wall_ms = 4.5;
  const BlockResult br2 = BlockResult::from(br.to_message({}));
  ASSERT_EQ(br2.chunks.size(), 2u);
  EXPECT_EQ(br2.chunks[1].begin, 16u);
  EXPECT_DOUBLE_EQ(br2.overlap_wall_ms, 4.5);
  EXPECT_TRUE(BlockResult::from(BlockResult{}.to_message({})).chunks.empty());  // whole
  EXPECT_FALSE(RunBlock::from(rb.to_message()).result_slot.has_value());        // no slot offered
}

// Issue 41: the job key inputs (worker, resident, master; absent from the
// job's JSON when worker, so run keys stay), and what travels for it: a
// run_block's resident flag and sent inputs with their buffers, a block
// result's clock and timeline.
TEST(Jobs, InputsIsAJobKeyAndTravelsInRunBlock) {
  EXPECT_EQ(Job{}.inputs, "worker");
  EXPECT_FALSE(to_json(Job{}).contains("inputs"));
  const auto jobs = parse_jobs(json::array({json{{"kernel", "sort"}, {"inputs", "master"}}}), Job{}, "t.json");
  EXPECT_EQ(jobs.at(0).inputs, "master");
  EXPECT_EQ(to_json(jobs[0])["inputs"], "master");
  try {
    parse_jobs(json::array({json{{"kernel", "sort"}, {"inputs", "host"}}}), Job{}, "t.json");
    ADD_FAILURE() << "inputs host was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("inputs 'host': use worker"), std::string::npos) << e.what();
  }
  RunBlock rb;
  rb.resident = true;
  rb.sent_inputs = {SentInput{0, "float", 64, 16, 0}, SentInput{1, "float", 32, 0, std::nullopt}};
  const RunBlock back = RunBlock::from(rb.to_message({HostBuffer(kFloat32, 8)}));
  EXPECT_TRUE(back.resident);
  ASSERT_EQ(back.sent_inputs.size(), 2u);
  EXPECT_EQ(back.sent_inputs[0].offset, 16u);
  EXPECT_EQ(back.sent_inputs[0].whole, 64u);
  EXPECT_EQ(back.sent_inputs[0].buffer, std::optional<std::size_t>(0));
  EXPECT_FALSE(back.sent_inputs[1].buffer.has_value());
  EXPECT_FALSE(RunBlock::from(RunBlock{}.to_message()).resident);
  EXPECT_THROW(RunBlock::from(rb.to_message()), ProtocolError);  // names buffer 0 of none
  BlockResult br;
  br.clock_ms = 1234.5;
  br.timeline = json::array({json{{"what", "kernel"}, {"chunk", 1}, {"start_ms", 0.5}, {"end_ms", 1.5}}});
  const BlockResult br2 = BlockResult::from(br.to_message({}));
  EXPECT_DOUBLE_EQ(br2.clock_ms, 1234.5);
  EXPECT_EQ(br2.timeline, br.timeline);
  EXPECT_TRUE(BlockResult::from(BlockResult{}.to_message({})).timeline.empty());
}

// Issue 41: a worker's timeline on the master's clock: on another host its
// receipt is estimated as its answer less the master's receive and its busy
// time, on the master's host read on the shared clock; the critical path is
// the worker that answered last, with its upload before its first kernel
// and its download after its last counted as exposed.
TEST(Timeline, PartsOnOneClockAndTheCriticalPath) {
  BlockResult br;
  br.busy_ms = 5;
  br.recv_ms = 0.5;
  br.clock_ms = 1000.25;
  const auto at = [](const char* what, int chunk, double a, double b) {
    return json{{"what", what}, {"chunk", chunk}, {"start_ms", a}, {"end_ms", b}};
  };
  br.timeline = json::array({at("receive", -1, -0.5, 0), at("upload", 0, 0.5, 1.5), at("kernel", 0, 1.5, 3),
                             at("upload", 1, 1.5, 2.5), at("kernel", 1, 3, 4), at("download", 0, 3, 3.5),
                             at("download", 1, 4, 4.5)});
  const json far = part_timeline(PartClock{1, "gpu", 0.1, 0.2, 10, 1, false, 990}, br);
  EXPECT_EQ(far["clock"], "estimated");
  EXPECT_DOUBLE_EQ(far["start_ms"].get<double>(), 4.0);  // 10 - 1 - 5
  const json near = part_timeline(PartClock{2, "gpu", 0.2, 0.3, 12, 1, true, 990}, br);
  EXPECT_EQ(near["clock"], "shared");
  EXPECT_DOUBLE_EQ(near["start_ms"].get<double>(), 10.25);  // 1000.25 - 990
  double last = -1;
  for (const json& s : near["spans"]) {  // in time order, each on the master's clock
    EXPECT_GE(s["start_ms"].get<double>(), last);
    last = s["start_ms"].get<double>();
  }
  const json cp = critical_path(json::array({far, near}));
  EXPECT_EQ(cp["rank"], 2);
  EXPECT_DOUBLE_EQ(cp["before_kernel_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(cp["exposed_upload_ms"].get<double>(), 1.0);  // chunk 0's; chunk 1's overlaps kernel 0
  EXPECT_DOUBLE_EQ(cp["upload_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(cp["kernel_span_ms"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(cp["exposed_download_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(cp["wait_message_ms"].get<double>(), 9.75);  // 0 to 10.25 - 0.5
  EXPECT_NE(critical_path_text(cp).find("critical path: rank 2 (gpu) last at 12.00 ms"), std::string::npos)
      << critical_path_text(cp);
  EXPECT_TRUE(critical_path(json::array()).is_null());
}

TEST(Protocol, SharedOutputsAndSlotErrorsRoundTrip) {
  BlockResult br;
  br.shared = {SharedOutput{1, 128, parse_element_type("int32"), 10}, SharedOutput{0, 0, kFloat32, 3}};
  br.shared_error = "cannot open";
  const BlockResult br2 = BlockResult::from(br.to_message({}));
  ASSERT_EQ(br2.shared.size(), 2u);
  EXPECT_EQ(br2.shared[0].index, 1u);
  EXPECT_EQ(br2.shared[0].offset, 128u);
  EXPECT_EQ(br2.shared[0].type, parse_element_type("int32"));
  EXPECT_EQ(br2.shared[0].count, 10u);
  EXPECT_EQ(br2.shared[1].type, kFloat32);
  EXPECT_EQ(br2.shared_error, "cannot open");
  const BlockResult none = BlockResult::from(BlockResult{}.to_message({}));
  EXPECT_TRUE(none.shared.empty());
  EXPECT_TRUE(none.shared_error.empty());
  Message bad = br.to_message({});
  bad.body["shared"][0]["type"] = "complex";
  EXPECT_THROW(BlockResult::from(bad), ProtocolError);
}

TEST(Protocol, MalformedBodiesAreProtocolErrors) {
  EXPECT_THROW(RunBlock::from(Message{Tag::run_block, json{{"job", 1}}, {}}), ProtocolError);
  EXPECT_THROW(WorkerError::from(Message{Tag::worker_error, json{{"job", 1}, {"status", "exploded"}}, {}}),
               ProtocolError);
  EXPECT_THROW(Hello::from(Message{Tag::welcome, json::object(), {}}), ProtocolError);
  EXPECT_THROW(parse_local_policy("sometimes"), UsageError);
}

TEST(InMemoryCommunicator, DeliversBySourceAndTimesOut) {
  InMemoryWorld world(3);
  world.at(1).send(0, Message{Tag::bye, json::object(), {}});
  world.at(2).send(0, Message{Tag::hello, json{{"protocol", 1}}, {}});
  auto p = world.at(0).probe(2);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->second, Tag::hello);
  auto r = world.at(0).recv(2, std::chrono::milliseconds(10));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->source, 2);
  r = world.at(0).recv(kAnySource, std::chrono::milliseconds(10));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message.tag, Tag::bye);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(world.at(0).recv(kAnySource, std::chrono::milliseconds(50)).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(45));
  EXPECT_THROW(world.at(0).send(5, Message{}), ProtocolError);
  EXPECT_EQ(world.sent_count(Tag::hello), 1u);
}

namespace {
DeviceInfo fake_device(const char* name, unsigned cu, unsigned pe) {
  DeviceInfo d;
  d.name = name;
  d.compute_units = cu;
  d.pe_per_cu = pe;
  return d;
}
}  // namespace

TEST(MasterRegistration, RefusesVersionMismatchAndMissingDeviceAndReportsSilence) {
  InMemoryWorld world(4);
  MemorySink sink;
  MasterOptions opt;
  opt.register_timeout = std::chrono::milliseconds(300);
  Master master(world.at(0), sink, opt);
  Hello old;
  old.protocol = kProtocolVersion + 1;
  old.rank = 1;
  old.host = "n1";
  old.device = fake_device("A", 2, 8);
  world.at(1).send(0, old.to_message());
  Hello none;
  none.rank = 2;
  none.host = "n2";
  none.error = "no OpenCL platform";
  world.at(2).send(0, none.to_message());
  // rank 3 never registers.
  EXPECT_EQ(master.register_workers(), 0u);
  const auto& w = master.workers();
  EXPECT_NE(w[0].problem.find("protocol version mismatch"), std::string::npos) << w[0].problem;
  EXPECT_NE(w[1].problem.find("no OpenCL device"), std::string::npos) << w[1].problem;
  EXPECT_NE(w[2].problem.find("did not register"), std::string::npos) << w[2].problem;
  auto a1 = world.at(1).recv(0, std::chrono::milliseconds(10));
  ASSERT_TRUE(a1.has_value());
  EXPECT_FALSE(Welcome::from(a1->message).accepted);
  EXPECT_EQ(sink.registered.size(), 3u);
}

TEST(MasterRun, SilentWorkerTimesOutAndTheJobFailsCleanly) {
  InMemoryWorld world(2);
  MemorySink sink;
  MasterOptions opt;
  opt.job_timeout = std::chrono::milliseconds(300);
  opt.shutdown_timeout = std::chrono::milliseconds(200);
  Master master(world.at(0), sink, opt);
  Hello h;
  h.rank = 1;
  h.host = "quiet-node";
  h.device = fake_device("Quiet", 1, 4);
  world.at(1).send(0, h.to_message());
  ASSERT_EQ(master.register_workers(), 1u);
  Job job;
  job.kernel = "trapezoid";
  job.size = "1024";
  const auto reports = master.run_all(Mode::run, {job, job});
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].status, JobStatus::failed);
  ASSERT_EQ(reports[0].faults.size(), 1u);
  EXPECT_NE(reports[0].faults[0].find("rank 1 on quiet-node"), std::string::npos) << reports[0].faults[0];
  EXPECT_NE(reports[0].faults[0].find("did not answer"), std::string::npos);
  EXPECT_EQ(reports[1].status, JobStatus::failed);  // nobody left: fails at once, no wait
  EXPECT_FALSE(master.workers()[0].alive);
  EXPECT_FALSE(master.shutdown());  // the silent worker never says bye
  EXPECT_EQ(sink.runs.size(), 2u);
}

TEST(MasterRun, StopRequestInterruptsAndSkipsTheRest) {
  InMemoryWorld world(2);
  MemorySink sink;
  std::atomic<bool> stop{false};
  MasterOptions opt;
  opt.stop_requested = [&] { return stop.load(); };
  Master master(world.at(0), sink, opt);
  Hello h;
  h.rank = 1;
  h.host = "n";
  h.device = fake_device("D", 1, 4);
  world.at(1).send(0, h.to_message());
  ASSERT_EQ(master.register_workers(), 1u);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  Job job;
  job.kernel = "trapezoid";
  job.size = "1024";
  const auto reports = master.run_all(Mode::run, {job, job, job});
  stopper.join();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].status, JobStatus::interrupted);
  EXPECT_TRUE(master.stopped());
  EXPECT_EQ(sink.runs.size(), 1u);  // recorded even though interrupted
}

// A job's status is an enum; the report's text is what it always was.
TEST(JobStatus, ReportTextRoundTrips) {
  for (auto [s, text] : {std::pair{JobStatus::ok, "ok"}, std::pair{JobStatus::failed, "failed"},
                         std::pair{JobStatus::interrupted, "interrupted"}, std::pair{JobStatus::stored, "stored"}}) {
    EXPECT_EQ(to_string(s), text);
    EXPECT_EQ(parse_job_status(text), s);
    JobReport r;
    r.status = s;
    EXPECT_EQ(to_json(r)["status"], text);
    EXPECT_EQ(r.ok(), s == JobStatus::ok || s == JobStatus::stored) << text;
  }
  EXPECT_THROW((void)parse_job_status("done"), UsageError);
}
