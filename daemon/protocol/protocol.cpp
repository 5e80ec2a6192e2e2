#include "protocol/protocol.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/target_json.hpp"
#include "format/trial_json.hpp"

namespace wstune::daemon {

using nlohmann::json;

std::string to_string(Tag t) {
  switch (t) {
    case Tag::hello:
      return "hello";
    case Tag::welcome:
      return "welcome";
    case Tag::run_block:
      return "run_block";
    case Tag::block_result:
      return "block_result";
    case Tag::worker_error:
      return "worker_error";
    case Tag::tune:
      return "tune";
    case Tag::tune_result:
      return "tune_result";
    case Tag::calibrate:
      return "calibrate";
    case Tag::calibrate_result:
      return "calibrate_result";
    case Tag::shutdown:
      return "shutdown";
    case Tag::bye:
      return "bye";
    case Tag::trial:
      return "trial";
    case Tag::trial_result:
      return "trial_result";
  }
  return fmt::format("tag-{}", static_cast<int>(t));
}

bool is_known_tag(int value) noexcept {
  return value >= static_cast<int>(Tag::hello) && value <= static_cast<int>(Tag::trial_result);
}

namespace {

template <typename T>
void put(std::vector<std::uint8_t>& out, T value) {
  const auto at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

struct Reader {
  std::span<const std::uint8_t> bytes;
  std::size_t at = 0;
  Tag tag;
  void need(std::size_t n, const char* what) const {
    if (bytes.size() - at < n) {
      throw ProtocolError(
          fmt::format("truncated {} message: {} needs {} bytes, {} left", to_string(tag), what, n, bytes.size() - at));
    }
  }
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
};

Samples samples_from_json(const json& j) {
  Samples s;
  if (j.is_object()) s.ms = j.value("samples_ms", std::vector<double>{});
  return s;
}

// Runs `parse` and turns JSON errors into ProtocolError naming the message.
template <typename F>
auto parse_body(const Message& m, Tag expected, F&& parse) {
  if (m.tag != expected) {
    throw ProtocolError(fmt::format("expected a {} message, got {}", to_string(expected), to_string(m.tag)));
  }
  try {
    return parse(m.body);
  } catch (const json::exception& e) {
    throw ProtocolError(fmt::format("malformed {} message: {}", to_string(m.tag), e.what()));
  }
}

}  // namespace

namespace {

// The body and the buffer count; each buffer's shape (scalar type, vector
// width, element count) and, with `with_data`, its bytes follow.
std::vector<std::uint8_t> encode_impl(const Message& m, bool with_data) {
  const std::vector<std::uint8_t> body = json::to_cbor(m.body);
  std::size_t total = 8 + body.size();
  for (const auto& b : m.buffers) total += 10 + (with_data ? b.bytes() : 0);
  std::vector<std::uint8_t> out;
  out.reserve(total);
  put(out, static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  put(out, static_cast<std::uint32_t>(m.buffers.size()));
  for (const auto& b : m.buffers) {
    put(out, static_cast<std::uint8_t>(b.type().scalar));
    put(out, static_cast<std::uint8_t>(b.type().width));
    put(out, static_cast<std::uint64_t>(b.size()));
    if (!with_data) continue;
    const auto at = out.size();
    out.resize(at + b.bytes());
    if (!b.empty()) std::memcpy(out.data() + at, b.data(), b.bytes());
  }
  return out;
}

// Reads the body and the buffer count; `each(i, shape, reader)` reads buffer i.
template <typename F>
Message decode_impl(Tag tag, std::span<const std::uint8_t> bytes, F&& each) {
  Message m;
  m.tag = tag;
  Reader r{bytes, 0, tag};
  const auto body_len = r.get<std::uint32_t>("the body length");
  r.need(body_len, "the body");
  try {
    m.body = json::from_cbor(bytes.subspan(r.at, body_len));
  } catch (const json::exception& e) {
    throw ProtocolError(fmt::format("malformed {} message body: {}", to_string(tag), e.what()));
  }
  r.at += body_len;
  const auto count = r.get<std::uint32_t>("the buffer count");
  for (std::uint32_t i = 0; i < count; ++i) {
    BufferShape shape;
    const auto scalar = r.get<std::uint8_t>("a buffer's element type");
    const auto width = r.get<std::uint8_t>("a buffer's vector width");
    if (scalar > static_cast<std::uint8_t>(ScalarType::f64) ||
        !(width == 1 || width == 2 || width == 4 || width == 8 || width == 16)) {
      throw ProtocolError(fmt::format("{} message: buffer {} has an unknown element type ({}, width {})",
                                      to_string(tag), i, scalar, width));
    }
    shape.type = ElementType{static_cast<ScalarType>(scalar), width};
    shape.count = r.get<std::uint64_t>("a buffer length");
    each(i, shape, r, m);
  }
  if (r.at != bytes.size()) {
    throw ProtocolError(fmt::format("{} message has {} trailing bytes", to_string(tag), bytes.size() - r.at));
  }
  return m;
}

}  // namespace

std::vector<std::uint8_t> encode(const Message& m) {
  return encode_impl(m, true);
}

Message decode(Tag tag, std::span<const std::uint8_t> bytes) {
  return decode_impl(tag, bytes, [&](std::uint32_t i, const BufferShape& s, Reader& r, Message& m) {
    if (s.count > (bytes.size() - r.at) / s.type.bytes()) {
      throw ProtocolError(fmt::format("truncated {} message: buffer {} claims {} elements of {}", to_string(tag), i,
                                      s.count, s.type.name()));
    }
    HostBuffer b(s.type, s.count);
    if (s.count) std::memcpy(b.data(), bytes.data() + r.at, b.bytes());
    r.at += b.bytes();
    m.buffers.push_back(std::move(b));
  });
}

std::vector<std::uint8_t> encode_header(const Message& m) {
  return encode_impl(m, false);
}

std::pair<Message, std::vector<BufferShape>> decode_header(Tag tag, std::span<const std::uint8_t> bytes) {
  std::vector<BufferShape> shapes;
  Message m =
      decode_impl(tag, bytes, [&](std::uint32_t, const BufferShape& s, Reader&, Message&) { shapes.push_back(s); });
  return {std::move(m), std::move(shapes)};
}

std::string_view to_string(LocalPolicy p) noexcept {
  switch (p) {
    case LocalPolicy::stored:
      return "stored";
    case LocalPolicy::tune:
      return "tune";
    case LocalPolicy::rule:
      return "rule";
    case LocalPolicy::null:
      return "null";
  }
  return "null";
}

LocalPolicy parse_local_policy(std::string_view text) {
  for (auto p : {LocalPolicy::stored, LocalPolicy::tune, LocalPolicy::rule, LocalPolicy::null})
    if (to_string(p) == text) return p;
  throw UsageError(fmt::format("unknown local-size policy '{}': use stored, tune, rule or null", text));
}

json to_json(const Block& b) {
  return json{{"dim", b.dim}, {"begin", b.begin}, {"end", b.end}};
}

Block block_from_json(const json& j) {
  return Block{j.at("dim").get<unsigned>(), j.at("begin").get<std::size_t>(), j.at("end").get<std::size_t>()};
}

Message Hello::to_message() const {
  Message m{Tag::hello,
            json{{"protocol", protocol},
                 {"rank", rank},
                 {"host", host},
                 {"selector", selector},
                 {"device", device ? to_json(*device) : json(nullptr)},
                 {"error", error}},
            {}};
  return m;
}

Hello Hello::from(const Message& m) {
  return parse_body(m, Tag::hello, [](const json& j) {
    Hello h;
    h.protocol = j.at("protocol").get<int>();
    h.rank = j.value("rank", 0);
    h.host = j.value("host", "");
    h.selector = j.value("selector", "");
    if (j.contains("device") && !j["device"].is_null()) h.device = device_info_from_json(j["device"]);
    h.error = j.value("error", "");
    return h;
  });
}

Message Welcome::to_message() const {
  json body{{"accepted", accepted}, {"reason", reason}, {"protocol", kProtocolVersion}};
  if (rank > 0) body["rank"] = rank;
  return Message{Tag::welcome, body, {}};
}

Welcome Welcome::from(const Message& m) {
  return parse_body(m, Tag::welcome, [](const json& j) {
    return Welcome{j.at("accepted").get<bool>(), j.value("reason", ""), j.value("rank", 0)};
  });
}

Message RunBlock::to_message(std::vector<HostBuffer> inputs) const {
  Message m{Tag::run_block,
            json{{"job", job},
                 {"attempt", attempt},
                 {"kernel", kernel},
                 {"size", size},
                 {"block", to_json(block)},
                 {"policy", std::string(to_string(policy))},
                 {"local", to_json(local)},
                 {"warmup", warmup},
                 {"repetitions", repetitions},
                 {"seed", seed},
                 {"params", params},
                 {"kernel_file", kernel_file},
                 {"overlap", overlap}},
            std::move(inputs)};
  if (result_slot) m.body["result_slot"] = to_json(*result_slot);
  if (resident) m.body["resident"] = true;
  if (!sent_inputs.empty()) {
    json list = json::array();
    for (const SentInput& in : sent_inputs)
      list.push_back(json{{"index", in.index},
                          {"type", in.type},
                          {"whole", in.whole},
                          {"offset", in.offset},
                          {"buffer", in.buffer ? json(*in.buffer) : json()}});
    m.body["inputs"] = std::move(list);
  }
  return m;
}

RunBlock RunBlock::from(const Message& m) {
  return parse_body(m, Tag::run_block, [&m](const json& j) {
    RunBlock r;
    r.job = j.at("job").get<std::uint64_t>();
    r.attempt = j.at("attempt").get<unsigned>();
    r.kernel = j.at("kernel").get<std::string>();
    r.size = j.at("size").get<std::string>();
    r.block = block_from_json(j.at("block"));
    r.policy = parse_local_policy(j.at("policy").get<std::string>());
    r.local = local_from_json(j.at("local"));
    r.warmup = j.value("warmup", 0u);
    r.repetitions = j.value("repetitions", 1u);
    r.seed = j.value("seed", std::uint64_t{42});
    r.params = j.value("params", json::object());
    r.kernel_file = j.value("kernel_file", json());
    r.overlap = std::max(1u, j.value("overlap", 1u));
    if (j.contains("result_slot")) r.result_slot = result_slot_from_json(j.at("result_slot"));
    r.resident = j.value("resident", false);
    for (const json& in : j.value("inputs", json::array())) {
      SentInput s{in.at("index").get<std::size_t>(), in.at("type").get<std::string>(),
                  in.at("whole").get<std::size_t>(), in.at("offset").get<std::size_t>(), std::nullopt};
      if (!in.at("buffer").is_null()) s.buffer = in.at("buffer").get<std::size_t>();
      if (s.buffer && *s.buffer >= m.buffers.size())
        throw ProtocolError(
            fmt::format("run_block: input {} names buffer {} of {}", s.index, *s.buffer, m.buffers.size()));
      r.sent_inputs.push_back(std::move(s));
    }
    return r;
  });
}

Message BlockResult::to_message(std::vector<HostBuffer> outputs) const {
  Message m{Tag::block_result,
            json{{"job", job},
                 {"attempt", attempt},
                 {"block", to_json(block)},
                 {"local", to_json(local)},
                 {"local_source", local_source},
                 {"kernel", to_json(kernel)},
                 {"h2d", to_json(h2d)},
                 {"d2h", to_json(d2h)},
                 {"recv_ms", recv_ms},
                 {"h2d_wall_ms", h2d_wall_ms},
                 {"d2h_wall_ms", d2h_wall_ms},
                 {"build_ms", build_ms},
                 {"busy_ms", busy_ms},
                 {"inputs_ms", inputs_ms},
                 {"trials", trials},
                 {"overlap_wall_ms", overlap_wall_ms}},
            {}};
  if (!chunks.empty()) {
    json list = json::array();
    for (const Block& c : chunks) list.push_back(to_json(c));
    m.body["chunks"] = std::move(list);
  }
  if (!shared.empty()) {
    json list = json::array();
    for (const SharedOutput& s : shared) list.push_back(to_json(s));
    m.body["shared"] = std::move(list);
  }
  if (!shared_error.empty()) m.body["shared_error"] = shared_error;
  if (joules) m.body["joules"] = *joules;
  if (!energy_sensor.empty()) m.body["energy_sensor"] = energy_sensor;
  if (!energy_note.empty()) m.body["energy_note"] = energy_note;
  if (clock_ms > 0) m.body["clock_ms"] = clock_ms;
  if (!timeline.empty()) m.body["timeline"] = timeline;
  m.buffers = std::move(outputs);
  return m;
}

BlockResult BlockResult::from(const Message& m) {
  return parse_body(m, Tag::block_result, [](const json& j) {
    BlockResult r;
    r.job = j.at("job").get<std::uint64_t>();
    r.attempt = j.at("attempt").get<unsigned>();
    r.block = block_from_json(j.at("block"));
    r.local = local_from_json(j.at("local"));
    r.local_source = j.value("local_source", "");
    r.kernel = samples_from_json(j.at("kernel"));
    r.h2d = samples_from_json(j.value("h2d", json::object()));
    r.d2h = samples_from_json(j.value("d2h", json::object()));
    r.recv_ms = j.value("recv_ms", 0.0);
    r.h2d_wall_ms = j.value("h2d_wall_ms", 0.0);
    r.d2h_wall_ms = j.value("d2h_wall_ms", 0.0);
    r.build_ms = j.value("build_ms", 0.0);
    r.busy_ms = j.value("busy_ms", 0.0);
    r.inputs_ms = j.value("inputs_ms", 0.0);
    r.trials = j.value("trials", json::array());
    for (const json& c : j.value("chunks", json::array())) r.chunks.push_back(block_from_json(c));
    r.overlap_wall_ms = j.value("overlap_wall_ms", 0.0);
    for (const json& s : j.value("shared", json::array())) r.shared.push_back(shared_output_from_json(s));
    r.shared_error = j.value("shared_error", "");
    if (j.contains("joules")) r.joules = j.at("joules").get<double>();
    r.energy_sensor = j.value("energy_sensor", "");
    r.energy_note = j.value("energy_note", r.joules ? "" : "the worker does not measure energy (protocol < 6)");
    r.clock_ms = j.value("clock_ms", 0.0);
    r.timeline = j.value("timeline", json::array());
    return r;
  });
}

Message WorkerError::to_message() const {
  return Message{
      Tag::worker_error,
      json{{"job", job}, {"attempt", attempt}, {"status", std::string(wstune::to_string(status))}, {"text", text}},
      {}};
}

WorkerError WorkerError::from(const Message& m) {
  return parse_body(m, Tag::worker_error, [](const json& j) {
    WorkerError e;
    e.job = j.at("job").get<std::uint64_t>();
    e.attempt = j.value("attempt", 0u);
    try {
      e.status = parse_trial_status(j.at("status").get<std::string>());
    } catch (const UsageError& u) {
      throw ProtocolError(u.what());
    }
    e.text = j.value("text", "");
    return e;
  });
}

Message WorkRequest::to_message(Tag tag) const {
  return Message{tag,
                 json{{"job", job},
                      {"kernel", kernel},
                      {"size", size},
                      {"repetitions", repetitions},
                      {"max_trials", max_trials},
                      {"calibrate_budget_ms", calibrate_budget_ms},
                      {"seed", seed},
                      {"params", params},
                      {"kernel_file", kernel_file},
                      {"energy", energy}},
                 {}};
}

WorkRequest WorkRequest::from(const Message& m) {
  if (m.tag != Tag::tune && m.tag != Tag::calibrate) {
    throw ProtocolError(fmt::format("expected a tune or calibrate message, got {}", to_string(m.tag)));
  }
  return parse_body(m, m.tag, [](const json& j) {
    WorkRequest w;
    w.job = j.at("job").get<std::uint64_t>();
    w.kernel = j.at("kernel").get<std::string>();
    w.size = j.at("size").get<std::string>();
    w.repetitions = j.value("repetitions", 3u);
    w.max_trials = j.value("max_trials", 0u);
    w.calibrate_budget_ms = j.value("calibrate_budget_ms", 0.0);
    w.seed = j.value("seed", std::uint64_t{42});
    w.params = j.value("params", json::object());
    w.kernel_file = j.value("kernel_file", json());
    w.energy = j.value("energy", false);
    return w;
  });
}

Message TrialRequest::to_message() const {
  return Message{
      Tag::trial,
      json{{"job", job}, {"params", config.params}, {"local", to_json(config.local)}, {"timing", to_json(timing)}},
      {}};
}

TrialRequest TrialRequest::from(const Message& m) {
  return parse_body(m, Tag::trial, [](const json& j) {
    TrialRequest r;
    r.job = j.at("job").get<std::uint64_t>();
    r.config = Configuration{j.at("params"), local_from_json(j.at("local"))};
    try {
      r.timing = timing_from_json(j.at("timing"), "trial.timing");
    } catch (const UsageError& e) {
      throw ProtocolError(fmt::format("malformed trial request: {}", e.what()));
    }
    return r;
  });
}

Message TrialAnswer::to_message() const {
  return Message{Tag::trial_result, json{{"job", job}, {"trial", to_json(trial)}}, {}};
}

TrialAnswer TrialAnswer::from(const Message& m) {
  return parse_body(m, Tag::trial_result, [](const json& j) {
    try {
      return TrialAnswer{j.at("job").get<std::uint64_t>(), trial_from_json(j.at("trial"), "trial_result.trial")};
    } catch (const UsageError& e) {
      throw ProtocolError(fmt::format("malformed trial: {}", e.what()));
    }
  });
}

Message WorkResult::to_message(Tag tag) const {
  return Message{tag, json{{"job", job}, {"data", data}}, {}};
}

WorkResult WorkResult::from(const Message& m) {
  if (m.tag != Tag::tune_result && m.tag != Tag::calibrate_result) {
    throw ProtocolError(fmt::format("expected a tune or calibrate result, got {}", to_string(m.tag)));
  }
  return parse_body(m, m.tag, [](const json& j) { return WorkResult{j.at("job").get<std::uint64_t>(), j.at("data")}; });
}

}  // namespace wstune::daemon
