// A job's kernel shared between wstuned's master and workers (kernel_source.hpp).
#include "protocol/kernel_source.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "protocol/protocol.hpp"
#include "session/tune_request.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/store.hpp"

namespace wstune::daemon {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read the file; check the path", p.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// How many leading ".." a relative path has.
std::size_t levels_up(const fs::path& rel) {
  std::size_t n = 0;
  for (const auto& part : rel) {
    if (part != "..") break;
    ++n;
  }
  return n;
}

// Writes `bytes` to `target` through a unique temporary name and a rename,
// so concurrent workers never see a half-written file.
void write_atomically(const fs::path& target, const json::binary_t& bytes) {
  fs::create_directories(target.parent_path());
  const fs::path tmp = target.string() + fmt::format(".{}.tmp", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw UsageError(fmt::format("cannot write {}: check TMPDIR", tmp.string()));
  }
  fs::rename(tmp, target);
}

fs::path cache_root() {
  const char* tmp = std::getenv("TMPDIR");
  return fs::path(tmp && *tmp ? tmp : "/tmp") / fmt::format("wstuned-kernels-{}", ::getuid());
}

}  // namespace

json pack_tuning_file(const std::string& path) {
  const TuningFile file = read_tuning_file(path);
  const fs::path dir = fs::absolute(fs::path(path)).parent_path().lexically_normal();
  std::vector<std::string> named{file.kernel_file};
  for (const auto& a : file.arguments)
    if (a.fill.type == FillType::binary_raw) named.push_back(a.fill.data_source);
  for (const auto& r : file.references)
    if (r.fill.type == FillType::binary_raw) named.push_back(r.fill.data_source);
  json files = json::object();
  std::size_t root = 0;
  std::string all = read_bytes(path);
  const std::string name = fs::path(path).filename().string();
  files[name] = json::binary_t(std::vector<std::uint8_t>(all.begin(), all.end()));
  for (const auto& f : named) {
    const fs::path rel = fs::absolute(fs::path(f)).lexically_normal().lexically_relative(dir);
    if (files.contains(rel.generic_string())) continue;
    const std::string bytes = read_bytes(f);
    all += rel.generic_string() + '\0' + bytes;
    files[rel.generic_string()] = json::binary_t(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    root = std::max(root, levels_up(rel));
  }
  return json{{"name", name}, {"root", root}, {"hash", fnv1a_hex(all)}, {"files", files}};
}

std::shared_ptr<const KernelSpec> unpack_tuning_file(const json& packed) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const KernelSpec>> cache;
  std::string hash, name;
  std::size_t root = 0;
  try {
    hash = packed.at("hash").get<std::string>();
    name = packed.at("name").get<std::string>();
    root = packed.at("root").get<std::size_t>();
  } catch (const json::exception& e) {
    throw ProtocolError(fmt::format("malformed kernel file package: {}", e.what()));
  }
  if (hash.find_first_not_of("0123456789abcdef") != std::string::npos || root > 64)
    throw ProtocolError("malformed kernel file package: bad hash or root");
  const std::lock_guard lock(mutex);
  if (auto it = cache.find(hash); it != cache.end()) return it->second;
  // The tuning file sits `root` levels below the package's directory, so a
  // file it names as ../x stays inside it.
  const fs::path base = cache_root() / hash;
  fs::path home = base;
  for (std::size_t i = 0; i < root; ++i) home /= "d";
  for (const auto& [rel, bytes] : packed.at("files").items()) {
    const fs::path target = (home / rel).lexically_normal();
    const auto inside = target.lexically_relative(base);
    if (rel.empty() || inside.empty() || *inside.begin() == "..")
      throw ProtocolError(fmt::format("malformed kernel file package: '{}' leaves its directory", rel));
    if (!bytes.is_binary()) throw ProtocolError(fmt::format("malformed kernel file package: '{}' is not bytes", rel));
    std::error_code ec;
    if (fs::file_size(target, ec) != bytes.get_binary().size() || ec) write_atomically(target, bytes.get_binary());
  }
  auto spec = load_tuning_file((home / name).string());
  cache.emplace(hash, spec);
  return spec;
}

std::shared_ptr<const KernelSpec> worker_kernel(const std::string& name, const json& packed) {
  if (!packed.is_null()) return unpack_tuning_file(packed);
  return std::shared_ptr<const KernelSpec>(&kernel_spec(name), [](const KernelSpec*) {});
}

std::shared_ptr<const KernelSpec> master_kernel(const std::string& name, const std::string& kernel_file) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const KernelSpec>> cache;
  if (kernel_file.empty()) return std::shared_ptr<const KernelSpec>(&kernel_spec(name), [](const KernelSpec*) {});
  const std::lock_guard lock(mutex);
  auto& spec = cache[kernel_file];
  if (!spec) spec = load_tuning_file(kernel_file);
  return spec;
}

Problem job_problem(const KernelSpec& spec, const std::string& size, const json& params) {
  const Problem p = resolve_problem(spec, size);
  if (params.empty()) return p;
  json all = spec.reference_params();
  for (const auto& [k, v] : params.items()) all[k] = v;
  return with_params(p, all);
}

}  // namespace wstune::daemon
