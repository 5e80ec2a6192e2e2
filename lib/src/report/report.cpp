// The static HTML report over a store (report.hpp, docs/report.md).
#include "report/report.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "report/svg.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace wstune {

namespace {

using svg::escape;

// Methods in the paper's order first, then any other label as first seen.
const std::vector<std::string> kKnownMethods{"baseline", "paper", "wstune"};

std::string method_of(const SplitRun& r) {
  if (r.detail.is_object() && r.detail.contains("method") && r.detail["method"].is_string())
    return r.detail["method"].get<std::string>();
  return r.model;
}

std::string size_of(const ProblemKey& p) {
  return p.size_text.empty() ? to_string(p.global) : p.size_text;
}

// A file-name part: letters, digits, '-' and '_' kept, the rest '_'.
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.empty() ? std::string("x") : out;
}

std::string ms(double v) {
  return fmt::format("{:.4g}", v);
}

void add_order(std::vector<std::string>& order, const std::string& v) {
  if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
}

struct KernelRuns {
  std::vector<std::string> sizes;                                        // first-seen order
  std::map<std::string, std::map<std::string, const SplitRun*>> newest;  // size -> method -> run
  std::map<std::string, std::vector<const SplitRun*>> all;               // size -> runs (sweeps included)
  std::vector<std::string> methods;                                      // non-sweep labels, ordered

  // The newest run of `method` on problem `size`; nullptr when none.
  const SplitRun* newest_of(const std::string& size, const std::string& method) const {
    const auto it = newest.find(size);
    if (it == newest.end()) return nullptr;
    const auto m = it->second.find(method);
    return m == it->second.end() ? nullptr : m->second;
  }
};

// The store's split runs grouped by kernel (first-seen order) and problem.
struct SplitRuns {
  std::vector<SplitRun> runs;  // oldest first; KernelRuns point into it
  std::vector<std::string> kernels;
  std::map<std::string, KernelRuns> by_kernel;
};

void group(SplitRuns& g) {
  std::map<std::string, std::vector<std::string>> seen;  // kernel -> non-sweep methods, first-seen order
  for (const SplitRun& r : g.runs) {
    const std::string k = r.kernel.name, size = size_of(r.problem), m = method_of(r);
    add_order(g.kernels, k);
    KernelRuns& kr = g.by_kernel[k];
    add_order(kr.sizes, size);
    kr.all[size].push_back(&r);
    if (m == "sweep") continue;
    kr.newest[size][m] = &r;  // oldest first: the last one is the newest
    add_order(seen[k], m);
  }
  for (auto& [k, kr] : g.by_kernel) {  // the known methods first, in their order, then the others
    for (const auto& known : kKnownMethods)
      if (std::find(seen[k].begin(), seen[k].end(), known) != seen[k].end()) add_order(kr.methods, known);
    for (const auto& m : seen[k]) add_order(kr.methods, m);
  }
}

// A tuning session with its trials.
struct SessionView {
  SessionRecord s;
  std::vector<TrialRecord> trials;
};

std::vector<SessionView> sessions_with_trials(const Store& store) {
  std::vector<SessionView> sessions;
  for (SessionRecord& s : store.sessions()) {
    auto t = store.trials(s.id);
    if (!t.empty()) sessions.push_back({std::move(s), std::move(t)});
  }
  return sessions;
}

const char* kStyle =
    "body{font-family:sans-serif;margin:2em;max-width:75em}table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #bbb;padding:.2em .6em;text-align:right}th{background:#eee}"
    "td.l,th.l{text-align:left}img{max-width:100%;margin:.5em 0;display:block}.note{color:#555}";

// The page's body and the SVG charts it shows, section by section.
class Page {
 public:
  explicit Page(const Store& store) {
    for (const DeviceInfo& d : store.devices()) device_names_[d.fingerprint()] = d.name;
  }

  void nothing_stored() {
    body_ +=
        "<p><strong>Nothing stored yet.</strong> The database has no split run and no tuning trial. Fill it "
        "with <code>scripts/bench-paper.sh</code> (or <code>bench_paper --db FILE</code>), "
        "<code>wstune split</code> or the daemon, then render again.</p>\n";
  }

  // Split runs: the overall chart, then per kernel a table, bars and share curves.
  void split_runs(const SplitRuns& g) {
    body_ +=
        "<h2>Split runs</h2>\n<p class=\"note\">Makespan: wall clock from starting all devices to the last "
        "read-back (ms); for each kernel, problem and method the newest stored run. Reduction against the "
        "baseline: (baseline − method) ÷ baseline, positive is faster.</p>\n";
    relative_chart(g);
    for (const auto& k : g.kernels) {
      const KernelRuns& kr = g.by_kernel.at(k);
      body_ += fmt::format("<h3>{}</h3>\n", escape(k));
      kernel_table(kr);
      kernel_bars(k, kr);
      share_curves(k, kr);
    }
  }

  // Tuning sessions: a table, then heatmaps of the 2-D kernels' group shapes.
  void sessions(const std::vector<SessionView>& sessions, Report& rep) {
    session_table(sessions);
    bool heading = false;
    for (const SessionView& v : sessions) {
      auto h = heatmap(v);
      if (!h) continue;
      if (!heading) {
        body_ +=
            "<h2>Group shapes (x × y) of 2-D kernels</h2>\n<p class=\"note\">Median kernel time (ms) of each "
            "measured shape; grey: not measured or failed.</p>\n";
        heading = true;
      }
      add_svg(fmt::format("heat_{}_{}.svg", ++rep.heatmaps, slug(v.s.kernel.name)), svg::render(*h), h->title);
    }
  }

  // index.html first, then the charts.
  void finish(Report& rep, const ReportOptions& options, std::size_t runs, std::size_t sessions) {
    std::string html = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{0}</title>\n"
        "<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n<p class=\"note\">{2}{3} split runs, {4} tuning sessions "
        "with trials, {5} devices.</p>\n",
        escape(options.title), kStyle,
        options.source.empty() ? "" : "Database: <code>" + escape(options.source) + "</code>. ", runs, sessions,
        device_names_.size());
    html += body_;
    html += "</body>\n</html>\n";
    rep.files.push_back({"index.html", std::move(html)});
    for (auto& f : svgs_) rep.files.push_back(std::move(f));
  }

 private:
  std::string device(const std::string& fp) const {
    auto it = device_names_.find(fp);
    return it == device_names_.end() ? fp : it->second;
  }

  void add_svg(const std::string& name, const std::string& content, const std::string& alt) {
    svgs_.push_back({name, content});
    body_ += fmt::format("<img src=\"{}\" alt=\"{}\"/>\n", escape(name), escape(alt));
  }

  // Every kernel's and problem's makespan relative to its baseline (like the paper's Fig. 7).
  void relative_chart(const SplitRuns& g) {
    svg::BarChart rel{"Makespan relative to the baseline (1 = baseline)", "÷ baseline", {}, {}, {}};
    std::vector<std::string> rel_methods;
    for (const auto& k : g.kernels)
      for (const auto& m : g.by_kernel.at(k).methods) add_order(rel_methods, m);
    rel.series = rel_methods;
    for (const auto& k : g.kernels) {
      const KernelRuns& kr = g.by_kernel.at(k);
      for (const auto& size : kr.sizes) {
        const SplitRun* base = kr.newest_of(size, "baseline");
        if (!base || base->makespan_ms <= 0) continue;
        const double b = base->makespan_ms;
        rel.categories.push_back(k + " " + size);
        std::vector<double> row;
        for (const auto& m : rel_methods) {
          const SplitRun* r = kr.newest_of(size, m);
          row.push_back(r ? r->makespan_ms / b : 0.0);
        }
        rel.values.push_back(row);
      }
    }
    if (!rel.categories.empty()) add_svg("relative.svg", svg::render(rel), rel.title);
  }

  // One row per problem and method: the devices' shares and times, the makespan, the reduction.
  void kernel_table(const KernelRuns& kr) {
    body_ +=
        "<table><tr><th class=\"l\">problem</th><th class=\"l\">method</th><th class=\"l\">split model</th>"
        "<th class=\"l\">devices: share %, time ms</th><th>makespan ms</th><th>reduction %</th></tr>\n";
    for (const auto& size : kr.sizes) {
      const SplitRun* base = kr.newest_of(size, "baseline");
      for (const auto& m : kr.methods) {
        const SplitRun* run = kr.newest_of(size, m);
        if (!run) continue;
        const SplitRun& r = *run;
        std::string devs;
        for (const SplitShare& d : r.devices)
          devs += fmt::format("{}{}: {:.1f} %, {}", devs.empty() ? "" : "<br/>", escape(device(d.device_fingerprint)),
                              100 * d.share, ms(d.time_ms));
        const std::string red =
            base && base->makespan_ms > 0
                ? fmt::format("{:+.1f}", 100 * (base->makespan_ms - r.makespan_ms) / base->makespan_ms)
                : std::string("–");
        body_ += fmt::format(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
            "<td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(size), escape(m), escape(r.model), devs, ms(r.makespan_ms), red);
      }
    }
    body_ += "</table>\n";
  }

  // Makespan per problem and method.
  void kernel_bars(const std::string& k, const KernelRuns& kr) {
    svg::BarChart bars{k + ": makespan by method", "makespan (ms)", {}, kr.methods, {}};
    for (const auto& size : kr.sizes) {
      auto it = kr.newest.find(size);
      if (it == kr.newest.end()) continue;
      bars.categories.push_back(size);
      std::vector<double> row;
      for (const auto& m : kr.methods) {
        const SplitRun* r = kr.newest_of(size, m);
        row.push_back(r ? r->makespan_ms : 0.0);
      }
      bars.values.push_back(row);
    }
    if (!bars.categories.empty()) add_svg("bars_" + slug(k) + ".svg", svg::render(bars), bars.title);
  }

  // Per problem of two or more devices: the makespan over the first device's
  // share (the sweep where there is one, else the stored runs), each method's
  // newest run marked.
  void share_curves(const std::string& k, const KernelRuns& kr) {
    for (const auto& size : kr.sizes) {
      const auto& all = kr.all.at(size);
      if (all.empty() || all.front()->devices.size() < 2) continue;
      const std::string first = device(all.front()->devices.front().device_fingerprint);
      svg::LinePlot plot{fmt::format("{} {}: makespan over the split", k, size),
                         fmt::format("share of {} (%)", first),
                         "makespan (ms)",
                         {},
                         std::nullopt};
      const bool have_sweep =
          std::any_of(all.begin(), all.end(), [](const SplitRun* r) { return method_of(*r) == "sweep"; });
      std::vector<std::pair<double, double>> curve;
      for (const SplitRun* r : all)
        if (!have_sweep || method_of(*r) == "sweep") curve.emplace_back(100 * r->devices.front().share, r->makespan_ms);
      std::sort(curve.begin(), curve.end());
      svg::Series line{have_sweep ? "sweep" : "stored runs", {}, {}};
      for (const auto& [x, y] : curve) line.x.push_back(x), line.y.push_back(y);
      if (!curve.empty()) {
        plot.mark_x = std::min_element(curve.begin(), curve.end(), [](const auto& a, const auto& b) {
                        return a.second < b.second;
                      })->first;
      }
      plot.series.push_back(line);
      for (const auto& m : kr.methods)
        if (const SplitRun* r = kr.newest_of(size, m))
          plot.series.push_back({m, {100 * r->devices.front().share}, {r->makespan_ms}});
      add_svg(fmt::format("share_{}_{}.svg", slug(k), ++share_plots_), svg::render(plot), plot.title);
    }
  }

  // One row per session: its NULL time and its fastest correct group shape.
  void session_table(const std::vector<SessionView>& sessions) {
    body_ +=
        "<h2>Tuning sessions</h2>\n<table><tr><th class=\"l\">device</th><th class=\"l\">kernel</th>"
        "<th class=\"l\">problem</th><th class=\"l\">strategy</th><th>trials</th><th>NULL ms</th>"
        "<th class=\"l\">best</th><th>best ms</th></tr>\n";
    for (const SessionView& v : sessions) {
      std::optional<double> null_ms;
      const TrialRecord* best = nullptr;
      for (const TrialRecord& t : v.trials) {
        const auto m = t.median_ms();
        if (t.status != TrialStatus::correct || !m) continue;
        if (!t.local) null_ms = *m;
        if (!best || *m < *best->median_ms()) best = &t;
      }
      body_ += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
          "<td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td></tr>\n",
          escape(device(v.s.device_fingerprint)), escape(v.s.kernel.name), escape(size_of(v.s.problem)),
          escape(v.s.spec.strategy), v.trials.size(), null_ms ? ms(*null_ms) : "–",
          best ? escape(to_string(best->local)) : "–", best ? ms(*best->median_ms()) : "–");
    }
    body_ += "</table>\n";
  }

  // The median time of each measured 2-D group shape of a 2-D problem's
  // session; nullopt for other sessions.
  std::optional<svg::Heatmap> heatmap(const SessionView& v) const {
    if (v.s.problem.global.dims != 2) return std::nullopt;
    std::set<std::size_t> xs, ys;
    for (const TrialRecord& t : v.trials)
      if (t.local && t.local->dims == 2) xs.insert(t.local->x), ys.insert(t.local->y);
    if (xs.empty()) return std::nullopt;
    svg::Heatmap h;
    h.title = fmt::format("{} {} on {}: median kernel time", v.s.kernel.name, size_of(v.s.problem),
                          device(v.s.device_fingerprint));
    h.x_label = "local x";
    h.y_label = "local y";
    for (auto x : xs) h.columns.push_back(std::to_string(x));
    for (auto y : ys) h.rows.push_back(std::to_string(y));
    h.values.assign(ys.size(), std::vector<std::optional<double>>(xs.size()));
    for (const TrialRecord& t : v.trials) {
      if (!t.local || t.local->dims != 2 || t.status != TrialStatus::correct || !t.median_ms()) continue;
      const auto c = static_cast<std::size_t>(std::distance(xs.begin(), xs.find(t.local->x)));
      const auto r = static_cast<std::size_t>(std::distance(ys.begin(), ys.find(t.local->y)));
      h.values[r][c] = t.median_ms();
    }
    return h;
  }

  std::map<std::string, std::string> device_names_;  // fingerprint -> name
  std::string body_;
  std::vector<ReportFile> svgs_;
  std::size_t share_plots_ = 0;
};

}  // namespace

Report render_report(const Store& store, const ReportOptions& options) {
  Report rep;
  Page page(store);
  SplitRuns g;
  g.runs = store.split_runs();
  group(g);
  const std::vector<SessionView> sessions = sessions_with_trials(store);
  rep.empty = g.runs.empty() && sessions.empty();
  rep.split_runs = g.runs.size();
  if (rep.empty) page.nothing_stored();
  if (!g.runs.empty()) page.split_runs(g);
  if (!sessions.empty()) page.sessions(sessions, rep);
  page.finish(rep, options, g.runs.size(), sessions.size());
  return rep;
}

void write_report(const Report& report, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error(fmt::format("report directory {}: cannot create it ({}); choose another --out", dir, ec.message()));
  for (const ReportFile& f : report.files) {
    const fs::path path = fs::path(dir) / f.name;
    std::ofstream out(path, std::ios::binary);
    if (!(out << f.content) || !out.flush())
      throw Error(fmt::format("report file {}: cannot write it; check the permissions of {}", path.string(), dir));
  }
}

}  // namespace wstune
