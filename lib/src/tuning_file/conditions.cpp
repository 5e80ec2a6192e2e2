// T1 Conditions compiled into solver constraints (conditions.hpp).
#include "tuning_file/conditions.hpp"

#include <algorithm>
#include <array>
#include <memory>

#include <fmt/format.h>

#include "expr/compiled.hpp"
#include "tuning_file/compiled.hpp"

namespace wstune::t1 {

namespace {

// The names a call could find bound (a binding of one makes the call a TypeError).
constexpr std::array<std::string_view, 12> kBuiltins{"abs", "bool", "float", "int",   "len", "list",
                                                     "max", "min",  "range", "round", "str", "sum"};

// A parameter's values as ints for interval bounds (empty when one is no
// int or bool), and whether they ascend with the value index.
struct IntValues {
  std::vector<std::int64_t> ints;
  bool ascending = true;
};

IntValues int_values(const std::vector<expr::Value>& values) {
  IntValues out;
  for (const auto& v : values) {
    if (v.kind() != expr::Value::Kind::integer && v.kind() != expr::Value::Kind::boolean) return {};
    if (!out.ints.empty() && v.as_int() <= out.ints.back()) out.ascending = false;
    out.ints.push_back(v.as_int());
  }
  return out;
}

// The interval of the ints whose value indices are set in `d`: the first and
// the last set for ascending values, else every one looked at.
expr::CompiledExpression::Range range_of(const IntValues& v, const DomainView& d) {
  expr::CompiledExpression::Range r{};
  if (v.ints.empty()) return r;
  if (d.bound >= 0) {
    const std::int64_t x = v.ints[static_cast<std::size_t>(d.bound)];
    return expr::CompiledExpression::Range{x, x, true, false};
  }
  const std::size_t n = d.bits.size();
  if (v.ascending) {
    std::size_t lo = n, hi = n;
    for (std::size_t w = 0; w < n && lo == n; ++w)
      if (d.bits[w]) lo = w;
    for (std::size_t w = n; w-- > 0 && hi == n;)
      if (d.bits[w]) hi = w;
    if (lo == n) return r;
    r.known = true;
    r.lo = v.ints[lo * 64 + static_cast<std::size_t>(__builtin_ctzll(d.bits[lo]))];
    r.hi = v.ints[hi * 64 + 63 - static_cast<std::size_t>(__builtin_clzll(d.bits[hi]))];
    return r;
  }
  for (std::size_t w = 0; w < n; ++w) {
    std::uint64_t bits = d.bits[w];
    while (bits) {
      const std::int64_t x = v.ints[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))];
      bits &= bits - 1;
      r.lo = r.known ? std::min(r.lo, x) : x;
      r.hi = r.known ? std::max(r.hi, x) : x;
      r.known = true;
    }
  }
  return r;
}

}  // namespace

std::vector<std::uint32_t> read_parameters(const std::vector<TuningParameter>& parameters, const expr::Expression& e) {
  const std::vector<std::string> names = e.names();
  std::vector<std::uint32_t> out;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const std::string& n = parameters[k].name;
    if (std::binary_search(names.begin(), names.end(), n) ||
        std::find(kBuiltins.begin(), kBuiltins.end(), n) != kBuiltins.end())
      out.push_back(static_cast<std::uint32_t>(k));
  }
  return out;
}

std::vector<Constraint> condition_constraints(const std::vector<TuningParameter>& parameters,
                                              const std::vector<expr::Expression>& conditions,
                                              const expr::Env& constants, const std::string& file) {
  std::vector<std::vector<expr::Value>> values(parameters.size());
  for (std::size_t k = 0; k < parameters.size(); ++k)
    for (const auto& v : parameters[k].values) values[k].push_back(to_value(v));
  std::vector<Constraint> out;
  for (std::size_t c = 0; c < conditions.size(); ++c) {
    Constraint con;
    con.params = read_parameters(parameters, conditions[c]);
    std::vector<std::string> slots;
    std::vector<std::vector<expr::Value>> slot_values;
    std::vector<const TuningParameter*> read;
    for (std::uint32_t k : con.params) {
      slots.push_back(parameters[k].name);
      slot_values.push_back(values[k]);
      read.push_back(&parameters[k]);
    }
    auto compiled = std::make_shared<const expr::CompiledExpression>(conditions[c], std::move(slots),
                                                                     std::move(slot_values), constants);
    if (compiled->compiled() && con.params.size() >= 3) {
      std::vector<IntValues> ints;
      for (std::uint32_t k : con.params) ints.push_back(int_values(values[k]));
      con.outlook = [compiled, ints = std::move(ints)](std::span<const DomainView> domains) {
        std::array<expr::CompiledExpression::Range, 16> small;
        std::vector<expr::CompiledExpression::Range> large;
        std::span<expr::CompiledExpression::Range> r(small.data(), domains.size());
        if (domains.size() > small.size()) {
          large.resize(domains.size());
          r = large;
        }
        for (std::size_t j = 0; j < domains.size(); ++j) r[j] = range_of(ints[j], domains[j]);
        switch (compiled->within(r)) {
          case expr::CompiledExpression::Truth::never:
            return Outlook::never;
          case expr::CompiledExpression::Truth::always:
            return Outlook::always;
          default:
            return Outlook::maybe;
        }
      };
    }
    con.holds = [compiled, read = std::move(read), c, file](std::span<const std::uint32_t> idx) {
      try {
        return compiled->test(idx);
      } catch (const expr::ExprError& e) {
        nlohmann::json with = nlohmann::json::object();
        for (std::size_t j = 0; j < read.size(); ++j) with[read[j]->name] = read[j]->values[idx[j]];
        fail(file, fmt::format("ConfigurationSpace.Conditions[{}].Expression", c),
             fmt::format("{} (with {})", e.what(), with.dump()));
      }
    };
    out.push_back(std::move(con));
  }
  return out;
}

}  // namespace wstune::t1
