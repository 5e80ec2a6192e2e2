// Tuning parameters and configurations (configuration.hpp).
#include "wstune/configuration.hpp"

#include <fmt/format.h>

namespace wstune {

std::string TuningParameter::define_text(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "1" : "0";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();  // integers as written, floats in shortest round-trip form
}

std::string configuration_key(const nlohmann::json& params, const LocalSize& local) {
  if (params.empty()) return to_string(local);
  std::string key;
  for (const auto& [name, value] : params.items()) {
    if (!key.empty()) key += ',';
    key += name + '=' + value.dump();
  }
  return key + ';' + to_string(local);
}

std::string Configuration::key() const {
  return configuration_key(params, local);
}

std::string to_string(const Configuration& c) {
  std::string out;
  for (const auto& [name, value] : c.params.items())
    out += fmt::format("{}={} ", name, value.is_string() ? value.get<std::string>() : value.dump());
  return out + "local=" + to_string(c.local);
}

std::string define_lines(const nlohmann::json& params) {
  std::string out;
  for (const auto& [name, value] : params.items())
    out += fmt::format("#define {} {}\n", name, TuningParameter::define_text(value));
  return out;
}

std::string define_options(const nlohmann::json& params) {
  std::string out;
  for (const auto& [name, value] : params.items()) {
    if (!out.empty()) out += ' ';
    out += fmt::format("-D {}={}", name, TuningParameter::define_text(value));
  }
  return out;
}

}  // namespace wstune
