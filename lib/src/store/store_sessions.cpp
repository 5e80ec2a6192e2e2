// wstune::Store: tuning sessions (with their writers' liveness) and their trials.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "format/trial_json.hpp"
#include "store/store_impl.hpp"
#include "wstune/timing.hpp"
#include "wstune/version.hpp"

namespace wstune {

using nlohmann::json;

std::optional<double> TrialRecord::median_ms() const {
  if (samples_ms.empty()) return std::nullopt;
  return Samples{samples_ms}.median();
}

// ---- sessions -----------------------------------------------------------------------

namespace {
constexpr std::string_view kSessionSelect =
    "SELECT s.id,s.uuid,d.fingerprint,k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,"
    "p.global_z,p.size_text,s.strategy,s.budget_trials,s.budget_seconds,s.started_at,s.ended_at,s.wstune_version,"
    "s.host,s.pid,s.heartbeat_at,s.objectives "
    "FROM sessions s JOIN devices d ON d.id=s.device_id JOIN kernels k ON k.id=s.kernel_id "
    "JOIN problems p ON p.id=s.problem_id ";

SessionRecord session_from_row(SQLite::Statement& q) {
  SessionRecord r;
  r.id = q.getColumn(0).getInt64();
  r.uuid = q.getColumn(1).getString();
  r.device_fingerprint = q.getColumn(2).getString();
  r.kernel = {q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getString()};
  r.problem.global = col_problem_extent(q, 6);
  r.problem.size_text = q.getColumn(10).getString();
  r.spec.strategy = q.getColumn(11).getString();
  r.spec.budget_trials = col_opt_int(q.getColumn(12));
  r.spec.budget_seconds = col_opt_double(q.getColumn(13));
  r.started_at = q.getColumn(14).getString();
  if (!q.getColumn(15).isNull()) r.ended_at = q.getColumn(15).getString();
  r.wstune_version = q.getColumn(16).getString();
  r.host = q.getColumn(17).getString();
  r.pid = col_opt_int(q.getColumn(18));
  if (!q.getColumn(19).isNull()) r.heartbeat_at = q.getColumn(19).getString();
  r.spec.objectives = col_objectives(q.getColumn(20));
  return r;
}
}  // namespace

// ---- live sessions ----------------------------------------------------------------------

namespace {

// Seconds since the epoch of an ISO 8601 UTC time ("2025-01-31T12:00:00.123Z").
std::optional<double> parse_utc(const std::string& text) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms) < 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1000.0;
}

double now_utc() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Whether process `pid` on this host runs (a zombie does not), and when it
// started (seconds since the epoch; nullopt where /proc does not say).
struct ProcessState {
  bool running = false;
  std::optional<double> started;
};
ProcessState process_state(std::int64_t pid) {
  ProcessState st;
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return st;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return st;
  st.running = true;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return st;
  // pid (comm) state ppid ... field 22 = starttime in clock ticks since boot;
  // comm may hold spaces and parentheses, so count from the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return st;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  rest >> state;
  if (state == "Z" || state == "X") {
    st.running = false;
    return st;
  }
  std::string field;
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(rest >> ticks)) return st;
  std::ifstream boot("/proc/stat");
  std::string key;
  double btime = 0;
  while (boot >> key) {
    if (key == "btime") {
      boot >> btime;
      break;
    }
    std::getline(boot, key);
  }
  const long hz = sysconf(_SC_CLK_TCK);
  if (btime > 0 && hz > 0) st.started = btime + static_cast<double>(ticks) / static_cast<double>(hz);
  return st;
}

bool writer_live(const std::string& host, std::optional<std::int64_t> pid,
                 const std::optional<std::string>& heartbeat) {
  if (!pid) return false;  // no recorded writer: imported, or schema version 1
  const auto beat = heartbeat ? parse_utc(*heartbeat) : std::nullopt;
  if (host != host_name()) return beat && now_utc() - *beat < kLiveHeartbeatSeconds;
  if (*pid == getpid()) return true;
  const ProcessState st = process_state(*pid);
  if (!st.running) return false;
  // A process that started after the session's last heartbeat (2 s for the
  // granularity of btime) cannot be its writer: the pid was reused.
  return !(st.started && beat && *st.started > *beat + 2);
}

}  // namespace

bool Store::session_live(const SessionRecord& s) const {
  return !s.ended_at && writer_live(s.host, s.pid, s.heartbeat_at);
}

bool Store::heartbeat(std::int64_t session_id) {
  return impl_->guard("refresh a session's heartbeat", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const bool ours = impl_->beat(session_id);
    tx.commit();
    return ours;
  });
}

bool Store::Impl::beat(std::int64_t session_id) {
  auto& u = stmt("UPDATE sessions SET heartbeat_at=? WHERE id=? AND pid=? AND host=?");
  u.bind(1, utc_now());
  u.bind(2, static_cast<std::int64_t>(session_id));
  u.bind(3, static_cast<std::int64_t>(getpid()));
  u.bind(4, host_name());
  return u.exec() == 1;
}

SessionRecord Store::open_session(const DeviceInfo& device, const KernelKey& kernel, const ProblemKey& problem,
                                  const SessionSpec& spec, bool resume) {
  Impl& m = *impl_;
  return m.guard("open a session", [&] {
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::IMMEDIATE);
    const auto dev = m.insert_device(device);
    const auto ker = m.kernel_id(kernel);
    const auto pro = m.problem_id(problem);
    std::optional<std::int64_t> id;
    bool resumed = false;
    if (resume) {
      // The newest unfinished session whose writer is gone (or is this
      // process); a live one belongs to its writer (issue 17: five processes
      // resumed one live session and wrote five best rows).
      auto& q = m.stmt(
          "SELECT id,host,pid,heartbeat_at FROM sessions WHERE device_id=? AND kernel_id=? AND "
          "problem_id=? AND strategy=? AND ended_at IS NULL ORDER BY id DESC");
      q.bind(1, static_cast<std::int64_t>(dev));
      q.bind(2, static_cast<std::int64_t>(ker));
      q.bind(3, static_cast<std::int64_t>(pro));
      q.bind(4, spec.strategy);
      while (q.executeStep()) {
        const std::string host = q.getColumn(1).getString();
        const auto pid = col_opt_int(q.getColumn(2));
        const std::optional<std::string> beat =
            q.getColumn(3).isNull() ? std::nullopt : std::optional<std::string>(q.getColumn(3).getString());
        const bool mine = pid && *pid == getpid() && host == host_name();
        if (mine || !writer_live(host, pid, beat)) {
          id = q.getColumn(0).getInt64();
          break;
        }
      }
      q.reset();
      if (id) {
        auto& take = m.stmt("UPDATE sessions SET host=?,pid=?,heartbeat_at=? WHERE id=?");
        take.bind(1, host_name());
        take.bind(2, static_cast<std::int64_t>(getpid()));
        take.bind(3, utc_now());
        take.bind(4, static_cast<std::int64_t>(*id));
        take.exec();
        resumed = true;
      }
    }
    if (!id) {
      auto& ins = m.stmt(
          "INSERT INTO sessions(uuid,device_id,kernel_id,problem_id,strategy,budget_trials,"
          "budget_seconds,started_at,ended_at,wstune_version,host,pid,heartbeat_at,objectives) "
          "VALUES(?,?,?,?,?,?,?,?,NULL,?,?,?,?,?)");
      ins.bind(1, new_uuid());
      ins.bind(2, static_cast<std::int64_t>(dev));
      ins.bind(3, static_cast<std::int64_t>(ker));
      ins.bind(4, static_cast<std::int64_t>(pro));
      ins.bind(5, spec.strategy);
      bind_opt(ins, 6, spec.budget_trials);
      bind_opt(ins, 7, spec.budget_seconds);
      ins.bind(8, utc_now());
      ins.bind(9, std::string(wstune::version()));
      ins.bind(10, host_name());
      ins.bind(11, static_cast<std::int64_t>(getpid()));
      ins.bind(12, utc_now());
      bind_objectives(ins, 13, spec.objectives);
      ins.exec();
      id = m.db->getLastInsertRowid();
    }
    tx.commit();
    auto& q = m.stmt(std::string(kSessionSelect) + "WHERE s.id=?");
    q.bind(1, static_cast<std::int64_t>(*id));
    q.executeStep();
    SessionRecord r = session_from_row(q);
    r.resumed = resumed;
    return r;
  });
}

void Store::end_session(std::int64_t session_id) {
  impl_->guard("end a session", [&] {
    auto& u = impl_->stmt(
        "UPDATE sessions SET ended_at=? WHERE id=? AND ended_at IS NULL AND "
        "(pid IS NULL OR (pid=? AND host=?))");
    u.bind(1, utc_now());
    u.bind(2, static_cast<std::int64_t>(session_id));
    u.bind(3, static_cast<std::int64_t>(getpid()));
    u.bind(4, host_name());
    u.exec();
  });
}

std::optional<SessionRecord> Store::session(std::int64_t session_id) const {
  return impl_->guard("read a session", [&]() -> std::optional<SessionRecord> {
    auto& q = impl_->stmt(std::string(kSessionSelect) + "WHERE s.id=?");
    q.bind(1, static_cast<std::int64_t>(session_id));
    if (!q.executeStep()) return std::nullopt;
    return session_from_row(q);
  });
}

std::vector<SessionRecord> Store::sessions() const {
  return impl_->guard("read sessions", [&] {
    std::vector<SessionRecord> out;
    auto& q = impl_->stmt(std::string(kSessionSelect) + "ORDER BY s.id");
    while (q.executeStep()) out.push_back(session_from_row(q));
    return out;
  });
}

// ---- trials ----------------------------------------------------------------------------

bool Store::Impl::insert_trial(std::int64_t session_id, const TrialRecord& t, const std::string& created_at) {
  check_json_depth(t.params, "a trial's params");
  auto& ins = stmt(
      "INSERT INTO trials(session_id,config,local_dims,local_x,local_y,local_z,status,error,samples_ms,median_ms,"
      "compile_ms,run_ms,verify_ms,created_at,params,global_dims,global_x,global_y,global_z,energy) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(session_id,config) DO NOTHING");
  ins.bind(1, static_cast<std::int64_t>(session_id));
  ins.bind(2, configuration_key(t.params, t.local));
  bind_local(ins, 3, t.local);
  ins.bind(7, std::string(to_string(t.status)));
  ins.bind(8, t.error);
  ins.bind(9, json(t.samples_ms).dump());
  bind_opt(ins, 10, t.median_ms());
  bind_opt(ins, 11, t.compile_ms);
  bind_opt(ins, 12, t.run_ms);
  bind_opt(ins, 13, t.verify_ms);
  ins.bind(14, created_at.empty() ? utc_now() : created_at);
  ins.bind(15, t.params.dump());
  bind_extent(ins, 16, t.global);
  if (t.energy) {
    ins.bind(20, to_json(*t.energy).dump());
  } else {
    ins.bind(20);
  }
  return ins.exec() == 1;
}

bool Store::add_trial(std::int64_t session_id, const TrialRecord& t) {
  return impl_->guard("store a trial", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const bool added = impl_->insert_trial(session_id, t, {});
    impl_->beat(session_id);
    tx.commit();
    return added;
  });
}

std::size_t Store::add_trials(std::int64_t session_id, const std::vector<TrialRecord>& trials) {
  return impl_->guard("store trials", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const std::string now = utc_now();
    std::size_t added = 0;
    for (const TrialRecord& t : trials) added += impl_->insert_trial(session_id, t, now) ? 1 : 0;
    impl_->beat(session_id);
    tx.commit();
    return added;
  });
}

bool Store::measured(std::int64_t session_id, const LocalSize& local, const json& params) const {
  return impl_->guard("look up a trial", [&] {
    auto& q = impl_->stmt("SELECT 1 FROM trials WHERE session_id=? AND config=?");
    q.bind(1, static_cast<std::int64_t>(session_id));
    q.bind(2, configuration_key(params, local));
    return q.executeStep();
  });
}

std::vector<TrialRecord> Store::trials(std::int64_t session_id) const {
  return impl_->guard("read trials", [&] {
    std::vector<TrialRecord> out;
    auto& q = impl_->stmt(
        "SELECT local_dims,local_x,local_y,local_z,status,error,samples_ms,compile_ms,run_ms,"
        "verify_ms,id,created_at,params,global_dims,global_x,global_y,global_z,energy FROM trials "
        "WHERE session_id=? ORDER BY id");
    q.bind(1, static_cast<std::int64_t>(session_id));
    while (q.executeStep()) {
      TrialRecord t;
      t.local = col_local(q, 0);
      t.status = parse_trial_status(q.getColumn(4).getString());
      t.error = q.getColumn(5).getString();
      t.samples_ms = json::parse(q.getColumn(6).getString()).get<std::vector<double>>();
      t.compile_ms = col_opt_double(q.getColumn(7));
      t.run_ms = col_opt_double(q.getColumn(8));
      t.verify_ms = col_opt_double(q.getColumn(9));
      t.id = q.getColumn(10).getInt64();
      t.created_at = q.getColumn(11).getString();
      t.params = impl_->stored_json(q.getColumn(12).getString(), "a trial's params");
      t.global = col_extent(q, 13);
      t.energy = impl_->stored_energy(q.getColumn(17));
      out.push_back(std::move(t));
    }
    return out;
  });
}

std::int64_t Store::trial_count(std::optional<std::int64_t> session_id) const {
  return impl_->guard("count trials", [&] {
    auto& q =
        impl_->stmt(session_id ? "SELECT count(*) FROM trials WHERE session_id=?" : "SELECT count(*) FROM trials");
    if (session_id) q.bind(1, static_cast<std::int64_t>(*session_id));
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

}  // namespace wstune
