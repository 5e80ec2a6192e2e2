#include "master/timeline.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace wstune::daemon {

using nlohmann::json;

namespace {

json span(const std::string& what, int chunk, double start, double end) {
  return json{{"what", what}, {"chunk", chunk}, {"start_ms", start}, {"end_ms", std::max(start, end)}};
}

// Added lengths of the spans named `what`, clipped to [from, to].
double added(const json& spans, const std::string& what, double from = -std::numeric_limits<double>::infinity(),
             double to = std::numeric_limits<double>::infinity()) {
  double sum = 0;
  for (const json& s : spans) {
    if (s.at("what") != what) continue;
    const double a = std::max(from, s.at("start_ms").get<double>());
    const double b = std::min(to, s.at("end_ms").get<double>());
    if (b > a) sum += b - a;
  }
  return sum;
}

}  // namespace

json part_timeline(const PartClock& c, const BlockResult& br) {
  const bool shared = c.same_host && br.clock_ms > 0;
  const double start = shared ? br.clock_ms - c.master_t0_ms : c.answer_ms - c.return_ms - br.busy_ms;
  json spans = json::array();
  spans.push_back(span("wait_message", -1, 0, start - br.recv_ms));
  for (const json& s : br.timeline)
    spans.push_back(span(s.at("what").get<std::string>(), s.value("chunk", -1), start + s.at("start_ms").get<double>(),
                         start + s.at("end_ms").get<double>()));
  spans.push_back(span("reply", -1, start + br.busy_ms, c.answer_ms - c.return_ms));
  spans.push_back(span("return", -1, c.answer_ms - c.return_ms, c.answer_ms));
  std::stable_sort(spans.begin(), spans.end(), [](const json& a, const json& b) {
    return a.at("start_ms").get<double>() < b.at("start_ms").get<double>();
  });
  return json{{"rank", c.rank},           {"device", c.device},       {"clock", shared ? "shared" : "estimated"},
              {"start_ms", start},        {"sent_ms", c.sent_ms},     {"sent_end_ms", c.sent_end_ms},
              {"answer_ms", c.answer_ms}, {"spans", std::move(spans)}};
}

json critical_path(const json& workers) {
  const json* last = nullptr;
  for (const json& w : workers)
    if (!last || w.at("answer_ms").get<double>() > last->at("answer_ms").get<double>()) last = &w;
  if (!last) return nullptr;
  const json& spans = last->at("spans");
  const double start = last->at("start_ms").get<double>(), answer = last->at("answer_ms").get<double>();
  double first_kernel = answer, last_kernel = start;
  for (const json& s : spans) {
    if (s.at("what") != "kernel") continue;
    first_kernel = std::min(first_kernel, s.at("start_ms").get<double>());
    last_kernel = std::max(last_kernel, s.at("end_ms").get<double>());
  }
  if (first_kernel > last_kernel) first_kernel = last_kernel = start;  // no kernel ran
  return json{{"rank", last->at("rank")},
              {"device", last->at("device")},
              {"answer_ms", answer},
              {"wait_message_ms", added(spans, "wait_message")},
              {"receive_ms", added(spans, "receive")},
              {"build_ms", added(spans, "build")},
              {"inputs_ms", added(spans, "inputs")},
              {"upload_ms", added(spans, "upload")},
              {"kernel_ms", added(spans, "kernel")},
              {"download_ms", added(spans, "download")},
              {"before_kernel_ms", first_kernel - start},
              {"exposed_upload_ms", added(spans, "upload", start, first_kernel)},
              {"kernel_span_ms", last_kernel - first_kernel},
              {"after_kernel_ms", answer - last_kernel},
              {"exposed_download_ms", added(spans, "download", last_kernel)},
              {"reply_ms", added(spans, "reply")},
              {"return_ms", added(spans, "return")}};
}

std::string critical_path_text(const json& p) {
  if (p.is_null()) return "no worker answered";
  const auto ms = [&](const char* key) { return p.at(key).get<double>(); };
  return fmt::format(
      "critical path: rank {} ({}) last at {:.2f} ms: waited {:.2f} ms for its message (receive {:.2f}), "
      "{:.2f} ms to its first kernel (build {:.2f}, inputs {:.2f}, upload {:.2f} of {:.2f} exposed), kernels "
      "{:.2f} ms ({:.2f} ms of kernel runs), {:.2f} ms after its last kernel (download {:.2f} of {:.2f} exposed, "
      "reply {:.2f}, return {:.2f})",
      p.at("rank").get<int>(), p.at("device").get<std::string>(), ms("answer_ms"), ms("wait_message_ms"),
      ms("receive_ms"), ms("before_kernel_ms"), ms("build_ms"), ms("inputs_ms"), ms("exposed_upload_ms"),
      ms("upload_ms"), ms("kernel_span_ms"), ms("kernel_ms"), ms("after_kernel_ms"), ms("exposed_download_ms"),
      ms("download_ms"), ms("reply_ms"), ms("return_ms"));
}

}  // namespace wstune::daemon
