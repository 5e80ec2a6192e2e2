// The HTML report (report.hpp): a small store built through the store API,
// rendered; every file must be well-formed XML, the bars' <title> texts must
// carry the stored makespans, the heatmap cells the stored trial medians.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "report/report.hpp"
#include "test_store_util.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace wstune {
namespace {

// A tiny well-formedness checker: balanced, properly nested tags; quoted
// attributes; known entities; one root element. Returns "" or the problem.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> stack;
  int roots = 0;
  std::size_t i = 0;
  auto check_text = [&](std::size_t from, std::size_t to) -> std::string {
    for (std::size_t k = from; k < to; ++k) {
      if (s[k] == '<') return "stray '<'";
      if (s[k] == '&') {
        const auto semi = s.find(';', k);
        if (semi == std::string::npos || semi > to) return "unterminated entity";
        const std::string e = s.substr(k + 1, semi - k - 1);
        if (e != "amp" && e != "lt" && e != "gt" && e != "quot" && e != "apos" && (e.empty() || e[0] != '#'))
          return "unknown entity &" + e + ";";
      }
    }
    return "";
  };
  while (i < s.size()) {
    const auto lt = s.find('<', i);
    if (lt == std::string::npos) {
      if (auto p = check_text(i, s.size()); !p.empty()) return p;
      break;
    }
    if (auto p = check_text(i, lt); !p.empty()) return p;
    if (s.compare(lt, 4, "<!--") == 0) {
      i = s.find("-->", lt);
      if (i == std::string::npos) return "unterminated comment";
      i += 3;
      continue;
    }
    const auto gt = s.find('>', lt);
    if (gt == std::string::npos) return "unterminated tag";
    std::string tag = s.substr(lt + 1, gt - lt - 1);
    i = gt + 1;
    if (tag[0] == '?' || tag[0] == '!') continue;  // <?xml ...?>, <!DOCTYPE ...>
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
      continue;
    }
    const bool self = tag.back() == '/';
    if (self) tag.pop_back();
    const auto sp = tag.find_first_of(" \n\t");
    const std::string name = tag.substr(0, sp);
    // attributes: name="value" pairs
    static const std::regex attrs(R"(^(\s+[A-Za-z_:][-A-Za-z0-9_:.]*="[^"<]*")*\s*$)");
    if (sp != std::string::npos && !std::regex_match(tag.substr(sp), attrs)) return "bad attributes in <" + name + ">";
    if (stack.empty()) ++roots;
    if (!self) stack.push_back(name);
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return "root elements: " + std::to_string(roots);
  return "";
}

const ReportFile* find(const Report& r, const std::string& name) {
  for (const auto& f : r.files)
    if (f.name == name) return &f;
  return nullptr;
}

// All <title>…</title> texts of a document.
std::vector<std::string> titles(const std::string& doc) {
  std::vector<std::string> out;
  static const std::regex re("<title>([^<]*)</title>");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

void run(Store& s, const DeviceInfo& a, const DeviceInfo& b, const std::string& size, const std::string& method,
         double ms, double share_a) {
  SplitRun r;
  r.kernel = KernelKey{"matmul", "", ""};
  r.problem = ProblemKey{Extent{256, 256, 2}, size};
  r.model = method == "paper" ? "pe-ratio" : method == "baseline" ? "proportional" : "measured";
  r.makespan_ms = ms;
  r.devices = {SplitShare{a.fingerprint(), share_a, ms}, SplitShare{b.fingerprint(), 1 - share_a, ms * 0.9}};
  r.detail = {{"method", method}};
  s.record_split_run(r);
}

TEST(Report, EmptyStoreSaysNothingYet) {
  Store s(":memory:");
  const Report r = render_report(s);
  EXPECT_TRUE(r.empty);
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].name, "index.html");
  EXPECT_NE(r.files[0].content.find("Nothing stored yet"), std::string::npos);
  EXPECT_EQ(xml_problem(r.files[0].content), "");
}

TEST(Report, ChecksItsOwnChecker) {
  EXPECT_EQ(xml_problem("<a><b x=\"1\"/>t &amp; u</a>"), "");
  EXPECT_NE(xml_problem("<a><b></a></b>"), "");
  EXPECT_NE(xml_problem("<a><img src=x></a>"), "");
  EXPECT_NE(xml_problem("<a>1 & 2</a>"), "");
  EXPECT_NE(xml_problem("<a/><b/>"), "");
}

TEST(Report, BarsSharesAndHeatmapsCarryTheStoredNumbers) {
  Store s(":memory:");
  const DeviceInfo a = test::fake_device("Dev <A> & co", "sm_90", "V", "gpu", 8);
  const DeviceInfo b = test::fake_device("Dev B", "x86", "V", "cpu", 2);
  s.put_device(a);
  s.put_device(b);
  run(s, a, b, "256", "baseline", 20.0, 0.33);
  run(s, a, b, "256", "paper", 12.5, 0.25);
  run(s, a, b, "256", "wstune", 8.25, 0.7);
  run(s, a, b, "256", "wstune", 7.75, 0.72);  // newer: this one is drawn
  run(s, a, b, "512x512x256", "baseline", 90.0, 0.33);
  run(s, a, b, "512x512x256", "wstune", 45.0, 0.7);
  for (int pct : {0, 50, 100}) run(s, a, b, "256", "sweep", 10.0 + pct / 10.0, pct / 100.0);

  const auto sess = s.open_session(a, KernelKey{"matmul", "", ""}, ProblemKey{Extent{256, 256, 2}, "256"},
                                   SessionSpec{"guided", 4, std::nullopt});
  auto t2 = [](std::size_t x, std::size_t y, double ms, TrialStatus st = TrialStatus::correct) {
    TrialRecord t;
    t.local = Extent{x, y, 2};
    t.status = st;
    t.samples_ms = {ms, ms, ms};
    return t;
  };
  TrialRecord null_trial;
  null_trial.samples_ms = {3.0};
  s.add_trials(sess.id, {null_trial, t2(16, 4, 1.25), t2(64, 1, 2.5), t2(16, 1, 0, TrialStatus::runtime)});

  const Report r = render_report(s, ReportOptions{"t <&> t", "x.db"});
  EXPECT_FALSE(r.empty);
  EXPECT_EQ(r.split_runs, 9u);
  EXPECT_EQ(r.heatmaps, 1u);
  for (const auto& f : r.files) EXPECT_EQ(xml_problem(f.content), "") << f.name;
  const std::string& html = r.files.at(0).content;
  EXPECT_NE(html.find("t &lt;&amp;&gt; t"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // every chart file is referenced from the page
  for (std::size_t i = 1; i < r.files.size(); ++i)
    EXPECT_NE(html.find("src=\"" + r.files[i].name + "\""), std::string::npos) << r.files[i].name;

  const ReportFile* bars = find(r, "bars_matmul.svg");
  ASSERT_NE(bars, nullptr);
  const auto bt = titles(bars->content);
  auto has = [](const std::vector<std::string>& v, const std::string& t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  EXPECT_TRUE(has(bt, "256 / baseline: 20.0")) << bars->content;
  EXPECT_TRUE(has(bt, "256 / paper: 12.5"));
  EXPECT_TRUE(has(bt, "256 / wstune: 7.75"));  // the newest wstune run
  EXPECT_FALSE(has(bt, "256 / wstune: 8.25"));
  EXPECT_TRUE(has(bt, "512x512x256 / baseline: 90.0"));
  EXPECT_TRUE(has(bt, "512x512x256 / wstune: 45.0"));
  // the sweep is not a method
  for (const auto& t : bt) EXPECT_EQ(t.find("sweep"), std::string::npos) << t;

  const ReportFile* rel = find(r, "relative.svg");
  ASSERT_NE(rel, nullptr);
  EXPECT_TRUE(has(titles(rel->content), "matmul 256 / paper: 0.625"));

  // the share curve of 256 is the sweep; methods are single points at their share
  const ReportFile* share = find(r, "share_matmul_1.svg");
  ASSERT_NE(share, nullptr);
  const auto st = titles(share->content);
  EXPECT_TRUE(has(st, "sweep: 50.0 -> 15.0"));
  EXPECT_TRUE(has(st, "wstune: 72.0 -> 7.75"));
  EXPECT_TRUE(has(st, "paper: 25.0 -> 12.5"));
  // the 512 problem has no sweep: its stored runs make the curve
  const ReportFile* share2 = find(r, "share_matmul_2.svg");
  ASSERT_NE(share2, nullptr);
  EXPECT_TRUE(has(titles(share2->content), "stored runs: 70.0 -> 45.0"));

  const ReportFile* heat = find(r, "heat_1_matmul.svg");
  ASSERT_NE(heat, nullptr);
  const auto ht = titles(heat->content);
  EXPECT_TRUE(has(ht, "16 x 4: 1.25 ms"));
  EXPECT_TRUE(has(ht, "64 x 1: 2.5 ms"));
  EXPECT_TRUE(has(ht, "16 x 1: invalid"));  // the failed trial
  EXPECT_TRUE(has(ht, "64 x 4: invalid"));  // not measured
  // escaping of the device name in the page
  EXPECT_NE(html.find("Dev &lt;A&gt; &amp; co"), std::string::npos);
}

TEST(Report, WriteReportCreatesTheDirectoryAndRefusesAFile) {
  test::TempDir dir;
  Store s(":memory:");
  const Report r = render_report(s);
  const std::string out = dir.file("a/b/report");
  write_report(r, out);
  std::ifstream in(out + "/index.html");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), r.files[0].content);
  { std::ofstream(dir.file("plain")) << "x"; }
  EXPECT_THROW(write_report(r, dir.file("plain")), Error);
}

}  // namespace
}  // namespace wstune
