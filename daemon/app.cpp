#include "app.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "format/json.hpp"
#include "master/master.hpp"
#include "master/memory_sink.hpp"
#include "master/store_sink.hpp"
#include "transport/tcp_communicator.hpp"
#include "worker/isolation.hpp"
#include "wstune/version.hpp"

namespace po = boost::program_options;

namespace wstune::daemon {

using nlohmann::json;

namespace {

const char* kUsage =
    "usage: mpiexec -n N wstuned [MODE] [options]\n\n"
    "MPI master/worker daemon: rank 0 is the master, ranks 1..N-1 are workers, each with one\n"
    "OpenCL device. MODE is run (default: split each job over the workers, gather, verify,\n"
    "store), tune (every worker searches local sizes; the master stores every trial) or\n"
    "calibrate (every worker measures what the `measured` split model needs).\n"
    "Jobs come from --job FILE (JSON, see docs/daemon.md) or --kernel/--size.\n"
    "With --listen HOST:PORT the master also takes workers that connect over TCP, at any time:\n"
    "  wstuned worker --connect HOST:PORT [--device SEL]   (a plain process, srun or mpiexec -n 1;\n"
    "  SIGTERM drains it: it answers its trial and leaves; docs/cluster.md).\n"
    "Options may also be set as WSTUNE_<OPTION> environment variables (e.g. WSTUNE_DB).";

struct Options {
  std::string mode = "run";
  std::string job_file;
  std::string config;
  std::vector<std::string> kernels;
  std::string kernel_file;
  std::string size;
  Job defaults;
  std::string split, local, direction;
  std::string db;
  bool no_store = false;
  std::string device = "auto";
  std::vector<std::string> worker_devices;
  std::vector<std::string> faults;
  double timeout_s = 600;
  double register_timeout_s = 60;
  bool json_out = false;
  std::string timeline;  // run: write each job's timeline here (JSON)
  bool quiet = false;
  std::string pid_file;
  bool no_isolation = false;
  bool resume = false;
  std::string listen;     // master: also take TCP workers here
  std::string connect;    // worker mode: the master's --listen address
  int wait_workers = -1;  // -1: 1 without MPI workers, else 0
  double rejoin_timeout_s = 60;
};

po::options_description describe(Options& o) {
  po::options_description d("wstuned options");
  d.add_options()("mode", po::value(&o.mode)->default_value("run"), "run, tune or calibrate (also the first argument)")(
      "job,j", po::value(&o.job_file), "job file (JSON; format in docs/daemon.md)")(
      "kernel,k", po::value(&o.kernels)->multitoken(), "kernel(s): matmul bilinear sort trapezoid, or all")(
      "kernel-file", po::value(&o.kernel_file),
      "a T1 tuning file describing your own OpenCL kernel (docs/tuning-files.md); --size binds its sizes")(
      "size,s", po::value(&o.size),
      "problem size for --kernel (default: the paper's Table 3 size) or --kernel-file "
      "(e.g. 512x512 or N=4096; default: the file's ProblemSize)")(
      "config", po::value(&o.config),
      "--kernel-file, run and calibrate: tuning parameter values as JSON, e.g. "
      "'{\"WPTY\": 2}' (default: the file's reference configuration)")(
      "strategy", po::value(&o.defaults.strategy),
      "tune: search strategy (default: the file's Search, else auto, as wstune tune)")(
      "retune", po::bool_switch(&o.defaults.retune), "tune: search devices that are tuned for the job already")(
      "objectives", po::value(&o.defaults.objectives),
      "tune: what decides the best, as wstune tune --objectives: NAME[:min|max],... (time, energy, power, edp or "
      "the file's wstune.Metrics; the first decides, all keep a Pareto front; default time)")(
      "energy", po::value(&o.defaults.energy)->default_value("auto"),
      "tune: observe each trial's energy on the workers' sensors: auto (when an objective needs it), on or off")(
      "repetitions,r", po::value(&o.defaults.repetitions)->default_value(3), "timed kernel runs per worker")(
      "warmup", po::value(&o.defaults.warmup)->default_value(0), "untimed runs before them")(
      "overlap", po::value(&o.defaults.overlap)->default_value(2),
      "run: each worker's block as up to N chunks "
      "over two queues, so one chunk's transfers overlap another's kernel (1: whole blocks)")(
      "inputs", po::value(&o.defaults.inputs)->default_value("worker"),
      "run: where a worker's block inputs come from: worker (generated from the seed, uploaded every job), "
      "resident (generated, kept on the device across the jobs that repeat them) or master (sent by the master "
      "every job; an input every block needs whole once)")(
      "timeline", po::value(&o.timeline),
      "run: write each job's per-worker timeline (uploads, kernels, downloads, waits; docs/daemon.md) as JSON "
      "to FILE, and name each job's critical path in its progress line")(
      "split", po::value(&o.split)->default_value("pe-ratio"),
      "split model: even, proportional, pe-ratio (paper §3.1) or measured")(
      "direction", po::value(&o.direction)->default_value("auto"),
      "split direction: auto (across the kernel's data-sharing direction: rows for x-priority 2-D kernels), x, y")(
      "local", po::value(&o.local)->default_value("stored"), "local-size policy: stored, tune, rule or null")(
      "seed", po::value(&o.defaults.seed)->default_value(42), "input seed")(
      "max-trials", po::value(&o.defaults.max_trials)->default_value(0), "tune: trials per worker (0: default)")(
      "calibrate-budget-ms", po::value(&o.defaults.calibrate_budget_ms)->default_value(250),
      "calibrate: cap on one slice's time; slices grow from 1/64 of the range and stop at the cap, "
      "the fit covers the rest (0: no cap, 1/8 ... all of the range)")(
      "db", po::value(&o.db), "database file (default: the store's default path; WSTUNE_DB)")(
      "no-store", po::bool_switch(&o.no_store), "keep results in memory only")(
      "device", po::value(&o.device)->default_value("auto"),
      "device selector of every worker: auto (round-robin over the node's devices by node-local "
      "worker index), P:D, cpu, gpu or a name substring")("worker-device", po::value(&o.worker_devices)->multitoken(),
                                                          "RANK=SELECTOR for one worker (repeatable)")(
      "inject-fault", po::value(&o.faults)->multitoken(),
      "RANK=build|kernel|hang|crash|stall: make one worker fail (tests; crash and stall hit its isolated OpenCL "
      "process)")(
      "no-isolation", po::bool_switch(&o.no_isolation),
      "run each worker's OpenCL work in the rank itself instead of a child process (a kernel that crashes its "
      "process then ends the rank, and under MPICH the whole job)")(
      "timeout", po::value(&o.timeout_s)->default_value(600), "seconds to wait for a job's answers")(
      "register-timeout", po::value(&o.register_timeout_s)->default_value(60),
      "seconds to wait for the workers to register")("json", po::bool_switch(&o.json_out),
                                                     "print the reports as JSON on stdout")(
      "pid-file", po::value(&o.pid_file),
      "the master writes its process id to FILE (removed when it exits), e.g. to send it SIGINT or SIGTERM")(
      "resume", po::bool_switch(&o.resume),
      "skip what the database holds from an earlier run of the same jobs (a run killed part way: its finished "
      "jobs, or in tune and calibrate mode each worker's finished part, are not run again)")(
      "listen", po::value(&o.listen),
      "HOST:PORT: the master also takes workers that connect over TCP (wstuned worker --connect), before and "
      "during the jobs; a lost one's trials go to the others (docs/cluster.md). Port 0: any free port (printed)")(
      "connect", po::value(&o.connect), "worker mode: the master's --listen address HOST:PORT")(
      "wait-workers", po::value(&o.wait_workers),
      "with --listen: connected workers to wait for (up to --register-timeout) before the first job "
      "(default: 1 when the launch has no MPI worker, else 0)")(
      "rejoin-timeout", po::value(&o.rejoin_timeout_s)->default_value(60),
      "tune with --listen: seconds a search whose last worker is gone waits for one of its device to connect "
      "before it ends unfinished")("quiet,q", po::bool_switch(&o.quiet), "no progress lines")(
      "version", "print the version and exit")("help,h", "print this help and exit");
  return d;
}

// Parses argv into `o`; throws UsageError.
void parse(int argc, char** argv, Options& o, po::variables_map& vm) {
  const auto desc = describe(o);
  po::positional_options_description pos;
  pos.add("mode", 1);
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
    po::store(po::parse_environment(
                  desc,
                  [&](const std::string& var) -> std::string {
                    if (var.rfind("WSTUNE_", 0) != 0) return {};
                    std::string opt = var.substr(7);
                    std::transform(opt.begin(), opt.end(), opt.begin(),
                                   [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
                    // Only the daemon's own settings; WSTUNE_PE_* etc. belong to the library.
                    static const std::vector<std::string> allowed{"db",
                                                                  "device",
                                                                  "timeout",
                                                                  "split",
                                                                  "local",
                                                                  "repetitions",
                                                                  "register-timeout",
                                                                  "job",
                                                                  "calibrate-budget-ms"};
                    return std::find(allowed.begin(), allowed.end(), opt) != allowed.end() ? opt : std::string{};
                  }),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    // master_usage_error() puts "wstuned: " before the message.
    throw UsageError(fmt::format("{}; see 'wstuned --help'", e.what()));
  }
}

// RANK=VALUE items of `option`; a rank that is not a worker of this job
// (0, or ≥ `size`) is a usage error, never silently ignored.
std::map<int, std::string> rank_map(const std::vector<std::string>& items, const char* option, int size) {
  std::map<int, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    int rank = -1;
    try {
      if (eq != std::string::npos) rank = std::stoi(item.substr(0, eq));
    } catch (const std::exception&) {
    }
    if (eq == std::string::npos || rank < 1 || eq + 1 >= item.size()) {
      throw UsageError(
          fmt::format("{} '{}': write RANK=VALUE with a worker rank ≥ 1, e.g. {} 2=cpu", option, item, option));
    }
    if (rank >= size) {
      throw UsageError(
          fmt::format("{} '{}': there is no worker rank {}; this job has {} rank(s), so the workers are "
                      "ranks 1 to {}",
                      option, item, rank, size, size - 1));
    }
    out[rank] = item.substr(eq + 1);
  }
  return out;
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cell(double ms) {
  return fmt::format("{:.3f}", ms);
}

// --pid-file: the master's pid, written at start, removed when the master is
// done (before main() may call MPI_Abort) or, when the master is killed (a
// worker rank's death makes MPICH's hydra SIGKILL every rank; docs/daemon.md),
// by a guardian process: it leaves hydra's process group (setsid), holds
// nothing of the job open, and waits for the end of a pipe the master holds;
// when that closes it removes the file if it still names the master.
class PidFile {
 public:
  explicit PidFile(std::string path) : path_(std::move(path)) {
    if (path_.empty()) return;
    std::ofstream out(path_);
    out << getpid() << '\n';
    out.close();
    if (!out) {
      std::cerr << "wstuned: cannot write --pid-file " << path_ << std::endl;
      path_.clear();
      return;
    }
    guard();
  }
  ~PidFile() {
    if (path_.empty()) return;
    std::remove(path_.c_str());
    if (pipe_ >= 0) ::close(pipe_);  // the guardian finds the file gone and leaves
    if (guardian_ > 0) ::waitpid(guardian_, nullptr, 0);
  }
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

 private:
  void guard() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    const pid_t master = getpid();
    const pid_t child = ::fork();
    if (child < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return;
    }
    if (child == 0) {
      // The guardian: only async-signal-safe calls and no C++ from here on.
      ::setsid();
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
      const int null = ::open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
      const int keep = fds[0];
      for (int fd = 3; fd < 65536; ++fd)
        if (fd != keep) ::close(fd);
      char c;
      while (::read(keep, &c, 1) < 0 && errno == EINTR) {
      }
      // The master is gone (or done): remove the file if it still names it.
      char buf[32] = {};
      const int f = ::open(path_.c_str(), O_RDONLY);
      if (f >= 0) {
        const ssize_t n = ::read(f, buf, sizeof buf - 1);
        ::close(f);
        char want[32];
        const int len = std::snprintf(want, sizeof want, "%d\n", static_cast<int>(master));
        if (n == len && std::memcmp(buf, want, static_cast<std::size_t>(len)) == 0) ::unlink(path_.c_str());
      }
      ::_exit(0);
    }
    ::close(fds[0]);
    pipe_ = fds[1];
    guardian_ = child;
  }
  std::string path_;
  int pipe_ = -1;
  pid_t guardian_ = -1;
};

using Rows = std::vector<std::vector<std::string>>;

// Joules as a table cell: "not measured" without (the progress line and
// --json say why).
std::string joules_cell(const std::optional<double>& j) {
  return j ? fmt::format("{:.3f}", *j) : "not measured";
}

// The run summary: a row per worker part, the job's cells on its first only;
// a job without parts gets one row of dashes.
Rows run_rows(const std::vector<JobReport>& reports) {
  Rows rows;
  rows.push_back({"job", "kernel", "size", "model", "status", "makespan ms", "job J", "overhead ms", "worker", "device",
                  "share", "local", "kernel ms", "transfer ms", "J"});
  for (const auto& r : reports) {
    const std::string status(to_string(r.status));
    if (r.parts.empty()) {
      rows.push_back({fmt::format("{}", r.id), r.job.kernel, r.size, std::string(to_string(r.job.split)), status, "-",
                      "-", "-", "-", "-", "-", "-", "-", "-", "-"});
    }
    bool first = true;
    for (const auto& p : r.parts) {
      rows.push_back({first ? fmt::format("{}", r.id) : "", first ? r.job.kernel : "", first ? r.size : "",
                      first ? std::string(to_string(r.plan.model)) : "", first ? status : "",
                      first ? cell(r.makespan_ms) : "", first ? joules_cell(r.joules()) : "",
                      first ? cell(r.overhead_ms) : "", fmt::format("{}", p.rank), p.device,
                      fmt::format("{:.1f}%", 100 * p.share), to_string(p.local), cell(p.kernel_ms), cell(p.transfer_ms),
                      joules_cell(p.joules)});
      first = false;
    }
  }
  return rows;
}

// A worker's tune result (its best local size) or calibration (its points),
// as the summary's result cell.
std::string work_result(const json& res, Mode mode) {
  if (mode == Mode::tune) {
    const json& best = res["best"];
    const std::string local = best.contains("local") ? to_string(local_from_json(best["local"])) : "?";
    return fmt::format("best {} {:.4f} ms over {} trials", local, best.value("median_ms", 0.0), res["trials"].size());
  }
  const auto& pts = res.value("points", json::array());
  return fmt::format("{} points up to {} of {} units, full {:.3f} ms, took {:.0f} ms", pts.size(),
                     pts.empty() ? 0 : pts.back().value("units", 0), res.value("total_units", 0),
                     res.value("full_ms", 0.0), res.value("wall_ms", 0.0));
}

// The tune or calibrate summary: a row per worker's result; a job without
// any gets one row of dashes.
Rows work_rows(const std::vector<JobReport>& reports, Mode mode) {
  Rows rows;
  rows.push_back({"job", "kernel", "size", "status", "worker", "device", "result"});
  for (const auto& r : reports) {
    const std::string status(to_string(r.status));
    if (r.data.empty()) rows.push_back({fmt::format("{}", r.id), r.job.kernel, r.size, status, "-", "-", "-"});
    for (const auto& w : r.data) {
      const std::string what = work_result(w["result"], mode);
      rows.push_back({fmt::format("{}", r.id), r.job.kernel, r.size, status, fmt::format("{}", w["rank"].get<int>()),
                      w["device"].get<std::string>(), what});
    }
  }
  return rows;
}

// Writes `rows` in columns as wide as their widest cell (no trailing blanks),
// with a line of dashes under the first row.
void print_table(std::ostream& os, const Rows& rows) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size(); ++i) line += fmt::format("{:<{}}  ", rows[k][i], width[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << '\n';
    if (k == 0) {
      std::size_t total = 0;
      for (auto w : width) total += w + 2;
      os << std::string(total - 2, '-') << '\n';
    }
  }
}

void print_summary(std::ostream& os, const std::vector<JobReport>& reports, Mode mode) {
  print_table(os, mode == Mode::run ? run_rows(reports) : work_rows(reports, mode));
}

// Writes the run jobs' timelines (JobReport::timeline) to `path`:
// {"clock": ..., "jobs": [...]}. Throws Error when it cannot be written.
void write_timeline(const std::string& path, const std::vector<JobReport>& reports) {
  json jobs = json::array();
  for (const auto& r : reports)
    if (!r.timeline.is_null()) jobs.push_back(r.timeline);
  std::ofstream out(path);
  out << json{{"clock",
               "ms from each job's first send on the master's monotonic clock; a worker's spans are its own offsets "
               "from its receipt of the job, placed on the shared clock of the master's host (clock: shared) or "
               "estimated from its result's arrival (clock: estimated)"},
              {"jobs", jobs}}
             .dump(1)
      << '\n';
  if (!out) throw Error(fmt::format("--timeline {}: cannot write the file", path));
}

int run_master(const Options& o, const std::vector<Job>& jobs, Communicator& comm,
               std::function<bool()> stop_requested) {
  const PidFile pid_file(o.pid_file);
  std::unique_ptr<ResultSink> sink;
  std::string db_path;
  bool store_failed = false;
  if (o.no_store) {
    sink = std::make_unique<MemorySink>();
  } else {
    try {
      auto opened = open_store_sink(o.db);
      sink = std::move(opened.first);
      db_path = opened.second;
    } catch (const std::exception& e) {
      // Still register and shut the workers down so every rank ends cleanly.
      std::cerr << "wstuned: cannot open the database" << (o.db.empty() ? "" : " " + o.db) << ": " << e.what()
                << "; give a writable --db PATH or WSTUNE_DB" << std::endl;
      sink = std::make_unique<MemorySink>();
      store_failed = true;
    }
  }
  MasterOptions mo;
  mo.job_timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  mo.register_timeout = std::chrono::milliseconds(static_cast<long long>(o.register_timeout_s * 1000));
  mo.stop_requested = stop_requested;
  mo.progress = o.quiet ? nullptr : &std::cerr;
  mo.resume = o.resume;
  mo.host = hostname();
  mo.timeline = !o.timeline.empty();
  if (!o.listen.empty()) {
    mo.wait_joined = static_cast<std::size_t>(o.wait_workers >= 0 ? o.wait_workers : (comm.size() > 1 ? 0 : 1));
    mo.rejoin_timeout = std::chrono::milliseconds(static_cast<long long>(o.rejoin_timeout_s * 1000));
  }
  Master master(comm, *sink, mo);
  const std::size_t usable = master.register_workers();
  const Mode mode = parse_mode(o.mode);
  std::vector<JobReport> reports;
  if (usable == 0) {
    std::cerr << "wstuned: no usable worker";
    for (const auto& w : master.workers())
      std::cerr << fmt::format("\n  rank {} on {}: {}", w.rank, w.host.empty() ? "?" : w.host, w.problem);
    if (!o.listen.empty())
      std::cerr << "\n  no worker connected to --listen " << o.listen << " within --register-timeout";
    else if (comm.size() < 2)
      std::cerr << "\n  start wstuned under MPI with workers: mpiexec -n 3 wstuned ..., or give --listen HOST:PORT "
                   "and start workers with wstuned worker --connect HOST:PORT";
    std::cerr << std::endl;
  } else if (!store_failed) {
    reports = master.run_all(mode, jobs);
  }
  const bool all_bye = master.shutdown();
  const bool stopped = master.stopped();
  if (!o.timeline.empty()) write_timeline(o.timeline, reports);
  if (o.json_out) {
    json workers = json::array();
    for (const auto& w : master.workers()) {
      workers.push_back(json{{"rank", w.rank},
                             {"host", w.host},
                             {"selector", w.selector},
                             {"device", w.device ? to_json(*w.device) : json(nullptr)},
                             {"usable", w.usable()},
                             {"problem", w.problem}});
      if (!w.peer.empty()) workers.back()["peer"] = w.peer;
    }
    json jr = json::array();
    for (const auto& r : reports) jr.push_back(to_json(r));
    std::cout
        << json{{"mode", o.mode}, {"db", db_path}, {"workers", workers}, {"jobs", jr}, {"interrupted", stopped}}.dump(2)
        << std::endl;
  } else if (!reports.empty()) {
    print_summary(std::cout, reports, mode);
  }
  if (!db_path.empty() && !o.quiet) {
    // No job ran (no usable worker, or a stop before the first): no results were stored.
    std::cerr << (reports.empty() ? "wstuned: no job ran, so no results are stored in " : "wstuned: results stored in ")
              << db_path << std::endl;
  }
  if (stopped) return kAbortStoppedCode;
  if (!all_bye) return kAbortCode;
  if (store_failed) return 1;
  if (usable == 0) return 3;
  const bool all_ok = std::all_of(reports.begin(), reports.end(), [](const JobReport& r) { return r.ok(); });
  return all_ok && reports.size() == jobs.size() ? 0 : 1;
}

}  // namespace

std::optional<int> early_exit(int argc, char** argv) {
  Options o;
  const auto desc = describe(o);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--version") {
      std::cout << "wstuned " << version() << " (protocol " << kProtocolVersion << ")\n";
      return 0;
    }
    if (a == "--help" || a == "-h") {
      std::cout << kUsage << "\n\n" << desc << "\n";
      return 0;
    }
  }
  return std::nullopt;
}

int node_local_worker_index(MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm local;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int n = 0;
  MPI_Comm_size(local, &n);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, local);
  MPI_Comm_free(&local);
  if (rank == 0) return -1;
  return static_cast<int>(std::count_if(ranks.begin(), ranks.end(), [&](int r) { return r > 0 && r < rank; }));
}

std::pair<std::optional<Device>, std::string> open_worker_device(const std::string& selector, int local_index) {
  try {
    const auto all = enumerate_devices();
    if (all.empty()) {
      return {std::nullopt, fmt::format("no OpenCL platform or device on this node (check the ICD loader: "
                                        "install an ICD such as pocl-opencl-icd, or set OCL_ICD_VENDORS; "
                                        "'clinfo -l' should list a device)")};
    }
    if (selector == "auto" || selector.empty()) {
      const auto i = static_cast<std::size_t>(std::max(local_index, 0)) % all.size();
      return {all[i], ""};
    }
    return {select_device(all, selector), ""};
  } catch (const std::exception& e) {
    return {std::nullopt, e.what()};
  }
}

namespace {

// What one rank takes from the command line: the options, the master's jobs,
// and the workers' --worker-device selectors and --inject-fault faults by rank.
struct RankSetup {
  Options o;
  bool connected = false;  // a worker connected over TCP (wstuned worker --connect): leaves on a signal
  std::vector<Job> jobs;
  std::map<int, std::string> devices, faults;
};

// Checks each --inject-fault kind; crash and stall hit the isolated OpenCL
// process, so --no-isolation refuses them.
void check_faults(const Options& o, const std::map<int, std::string>& faults) {
  for (const auto& [r, f] : faults) {
    const FaultKind kind = parse_fault(f);
    if (o.no_isolation && (kind == FaultKind::crash || kind == FaultKind::stall)) {
      throw UsageError(
          fmt::format("--inject-fault {}={}: {} hits the isolated OpenCL process; drop --no-isolation", r, f, f));
    }
  }
}

// Parses argv into `s` and checks what every rank shares; throws UsageError.
void parse_options(int argc, char** argv, int size, RankSetup& s) {
  Options& o = s.o;
  po::variables_map vm;
  parse(argc, argv, o, vm);
  parse_mode(o.mode);
  o.defaults.split = parse_job_split(o.split);
  o.defaults.direction = parse_split_direction(o.direction, "--direction");
  o.defaults.local = parse_local_policy(o.local);
  o.defaults.energy = parse_energy_mode(o.defaults.energy, "--energy");
  (void)job_from_json(json{{"inputs", o.defaults.inputs}}, o.defaults, "--inputs");  // checks its value
  s.devices = rank_map(o.worker_devices, "--worker-device", size);
  s.faults = rank_map(o.faults, "--inject-fault", size);
  check_faults(o, s.faults);
  if (o.timeout_s <= 0 || o.register_timeout_s <= 0) throw UsageError("--timeout and --register-timeout must be > 0");
  if (o.mode == "worker") {
    throw UsageError("wstuned worker runs on its own, not as a rank of a launch: wstuned worker --connect HOST:PORT");
  }
  if (!o.connect.empty()) {
    throw UsageError("--connect is a worker's: wstuned worker --connect HOST:PORT (the master takes --listen)");
  }
  if (!o.listen.empty()) parse_endpoint(o.listen, "--listen");
  if (o.rejoin_timeout_s < 0) throw UsageError("--rejoin-timeout must be >= 0");
  if (vm.count("db") && o.db.empty()) {
    throw UsageError("--db '': give a database file (e.g. --db results.db), or leave --db out for the default");
  }
}

// The master's jobs from exactly one of --job, --kernel and --kernel-file,
// checked for the mode; throws UsageError.
std::vector<Job> read_jobs(const Options& o) {
  if (!o.job_file.empty() + !o.kernels.empty() + !o.kernel_file.empty() > 1)
    throw UsageError("give one of --job FILE, --kernel K or --kernel-file FILE");
  std::vector<Job> jobs;
  if (!o.job_file.empty())
    jobs = read_job_file(o.job_file, o.defaults);
  else if (!o.kernels.empty())
    jobs = jobs_from_options(o.kernels, o.size, o.defaults);
  else if (!o.kernel_file.empty())
    jobs = jobs_from_kernel_file(o.kernel_file, o.size, o.config, o.defaults);
  else
    throw UsageError(
        "no jobs: give --job FILE (see share/examples/jobs.json), --kernel K [--size S] or "
        "--kernel-file FILE [--size S]");
  return jobs;
}

// A worker's end after a usage error: every rank parses the same command
// line, so the master has the same error and prints it once. The worker
// registers without a device, carrying its error (the master names it if only
// this rank has it, e.g. an MPMD launch), and ends when refused or shut down.
int worker_usage_error(Communicator& comm, const UsageError& e, std::function<bool()> stop_requested) {
  WorkerOptions wo;
  wo.host = hostname();
  wo.stop_requested = std::move(stop_requested);
  Worker worker(comm, std::nullopt, fmt::format("usage error on rank {}: {}", comm.rank(), e.what()), wo);
  const int code = worker.serve();
  return code == 3 ? kUsageCode : code;
}

// The master's end after a usage error: it prints the error, lets the workers
// register and shuts them down, so every rank ends normally and the launcher
// returns this status.
int master_usage_error(Communicator& comm, const UsageError& e, std::function<bool()> stop_requested) {
  std::cerr << "wstuned: " << e.what() << std::endl;
  MemorySink none;
  MasterOptions mo;
  mo.register_timeout = std::chrono::seconds(30);
  mo.stop_requested = std::move(stop_requested);
  Master master(comm, none, mo);
  master.register_workers();
  return master.shutdown() ? kUsageCode : kAbortCode;
}

// The master with --listen: its launch's ranks and the workers that connect.
int run_listening_master(const Options& o, const std::vector<Job>& jobs, Communicator& comm,
                         std::function<bool()> stop_requested) {
  std::unique_ptr<TcpHub> hub;
  try {
    hub = std::make_unique<TcpHub>(parse_endpoint(o.listen, "--listen"), &comm);
  } catch (const Error& e) {
    return master_usage_error(comm, UsageError(fmt::format("--listen {}: {}", o.listen, e.what())),
                              std::move(stop_requested));
  }
  const Endpoint at = parse_endpoint(o.listen, "--listen");
  std::cerr << fmt::format("wstuned: listening on {}:{} (workers join with: wstuned worker --connect {}:{})", at.host,
                           hub->port(), at.host == "0.0.0.0" ? hostname() : at.host, hub->port())
            << std::endl;
  return run_master(o, jobs, *hub, std::move(stop_requested));
}

// The worker's options: its --worker-device selector (else --device), its
// injected fault and the registration timeout.
WorkerOptions worker_options(const RankSetup& s, int rank, std::function<bool()> stop_requested) {
  WorkerOptions wo;
  wo.host = hostname();
  wo.selector = s.devices.count(rank) ? s.devices.at(rank) : s.o.device;
  wo.fault = s.faults.count(rank) ? parse_fault(s.faults.at(rank)) : FaultKind::none;
  wo.stop_requested = std::move(stop_requested);
  wo.welcome_timeout = std::chrono::milliseconds(static_cast<long long>(s.o.register_timeout_s * 2000));
  wo.leave_on_stop = s.connected;
  wo.log = &std::cerr;
  return wo;
}

// Serves the master with the device in an isolated child process; returns the
// worker's status.
int serve_isolated(Communicator& comm, WorkerOptions wo, int local_index, double timeout_s) {
  // The rank never touches OpenCL: a child process opens the device and
  // runs every request (isolation.hpp), so a kernel that crashes or hangs
  // its process costs one job, not the rank (issue 17). The child gives up
  // on a request a little before the master's --timeout does.
  IsolationOptions io;
  io.selector = wo.selector;
  io.local_index = local_index;
  io.worker = wo;
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  io.request_timeout = std::max(timeout / 2, timeout - std::chrono::milliseconds(2000));
  io.startup_timeout = wo.welcome_timeout;
  IsolatedDevice isolated(io);
  wo.delegate = &isolated;
  Worker worker(comm, isolated.device(), isolated.error(), wo);
  return worker.serve();
}

// Runs a worker rank, its device in this process (--no-isolation) or in a
// child; returns its exit status.
int run_worker(const RankSetup& s, Communicator& comm, int local_index, std::function<bool()> stop_requested) {
  const WorkerOptions wo = worker_options(s, comm.rank(), std::move(stop_requested));
  int code = 0;
  if (s.o.no_isolation) {
    auto [device, why] = open_worker_device(wo.selector, local_index);
    Worker worker(comm, std::move(device), why, wo);
    code = worker.serve();
  } else {
    code = serve_isolated(comm, wo, local_index, s.o.timeout_s);
  }
  // Refused at registration: the master reports it (and ends with status 3
  // when no worker is usable); the launcher's status must not say failure
  // when every job succeeded on the other workers (issue 17).
  return code == 3 ? 0 : code;
}

}  // namespace

int run_rank(int argc, char** argv, Communicator& comm, int local_index, std::function<bool()> stop_requested) {
  RankSetup s;
  try {
    parse_options(argc, argv, comm.size(), s);
    if (comm.rank() == 0) s.jobs = read_jobs(s.o);
  } catch (const UsageError& e) {
    if (comm.rank() != 0) return worker_usage_error(comm, e, std::move(stop_requested));
    return master_usage_error(comm, e, std::move(stop_requested));
  }
  if (comm.rank() == 0 && s.o.listen.empty()) return run_master(s.o, s.jobs, comm, std::move(stop_requested));
  if (comm.rank() == 0) return run_listening_master(s.o, s.jobs, comm, std::move(stop_requested));
  return run_worker(s, comm, local_index, std::move(stop_requested));
}

std::optional<int> run_connected_worker(int argc, char** argv, std::function<bool()> stop_requested) {
  RankSetup s;
  po::variables_map vm;
  try {
    parse(argc, argv, s.o, vm);
  } catch (const UsageError& e) {
    if (argc < 2 || std::string_view(argv[1]) != "worker") return std::nullopt;  // the ranks report it
    std::cerr << "wstuned: " << e.what() << std::endl;
    return kUsageCode;
  }
  if (s.o.mode != "worker") return std::nullopt;
  try {
    if (s.o.connect.empty())
      throw UsageError("wstuned worker: give --connect HOST:PORT, the --listen address of a running master");
    if (!s.o.listen.empty()) throw UsageError("--listen is the master's; a worker takes --connect HOST:PORT");
    if (s.o.timeout_s <= 0 || s.o.register_timeout_s <= 0)
      throw UsageError("--timeout and --register-timeout must be > 0");
    s.devices.clear();
    s.connected = true;
    const Endpoint at = parse_endpoint(s.o.connect, "--connect");
    std::unique_ptr<TcpClient> comm;
    try {
      comm = std::make_unique<TcpClient>(
          at, std::chrono::milliseconds(static_cast<long long>(s.o.register_timeout_s * 1000)));
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      std::cerr << "wstuned: " << e.what() << std::endl;
      return 4;
    }
    return run_worker(s, *comm, 0, std::move(stop_requested));
  } catch (const UsageError& e) {
    std::cerr << "wstuned: " << e.what() << "; see 'wstuned --help'" << std::endl;
    return kUsageCode;
  }
}

}  // namespace wstune::daemon
