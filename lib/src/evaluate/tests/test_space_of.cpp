// make_search_space() on tuning files: configuration for configuration what
// the brute-force loop over the Cartesian product built before the space
// solver (every combination, every condition interpreted, the local sizes
// of each valid one, the baseline left out) on the example files and the
// test data, and a 10^9-combination file built without visiting its product.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <fmt/format.h>

#include "evaluate/trial.hpp"
#include "space/rules.hpp"
#include "test_store_util.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;

namespace {

const std::string kData = WSTUNE_TEST_DATA_DIR;

// A device-like target for the kernel's reference configuration at p.
TuneTarget target_of(const KernelSpec& spec, const Problem& p) {
  TuneTarget t;
  t.kernel = std::string(spec.name());
  t.size = p.text;
  t.global = spec.global_size(with_params(p, spec.reference_params()));
  t.problem = t.global;
  t.priority = spec.priority();
  t.limits.max_work_group_size = 1024;
  t.limits.max_work_item_sizes = {1024, 1024, 64};
  t.pe_per_cu = 64;
  return t;
}

struct Expected {
  std::vector<Configuration> configurations;
  Configuration baseline;
  std::optional<Configuration> rule;
};

// The space as the brute-force loop built it (the old make_search_space and
// SearchSpace constructor): odometer order, every condition interpreted.
Expected brute_force(const KernelSpec& spec, const Problem& p, const TuneTarget& target) {
  const Block b = spec.whole(p);
  const Problem ref = with_params(p, spec.reference_params());
  const bool null_ok = spec.null_local_allowed();
  const auto base_shapes = enumerate_local_sizes(target.global, target.limits);
  const LocalSize rule_shape = paper_rule(target.global, base_shapes, target.priority, target.pe_per_cu);
  Expected e;
  LocalSize base_local = spec.parameter_local(ref);
  if (!base_local && !null_ok)
    base_local = rule_shape ? rule_shape : LocalSize(base_shapes.empty() ? Extent{} : base_shapes.front());
  e.baseline = Configuration{ref.params, base_local};
  if (!spec.parameter_local(ref) && rule_shape && rule_shape != base_local)
    e.rule = Configuration{ref.params, rule_shape};
  const auto& ps = spec.tuning_parameters();
  std::vector<std::size_t> idx(ps.size(), 0);
  for (;;) {
    json params = json::object();
    for (std::size_t k = 0; k < ps.size(); ++k) params[ps[k].name] = ps[k].values[idx[k]];
    const Problem pp = with_params(p, params);
    if (spec.satisfies_constraints(pp)) {
      const Extent g = spec.block_global(pp, b);
      std::vector<LocalSize> ls;
      if (const LocalSize fixed = spec.parameter_local(pp)) {
        if (fits(*fixed, g, target.limits)) ls.push_back(fixed);
      } else {
        if (null_ok) ls.emplace_back(std::nullopt);
        for (const Extent& x : enumerate_local_sizes(g, target.limits)) ls.emplace_back(x);
      }
      for (const LocalSize& l : ls)
        if (!(Configuration{params, l} == e.baseline)) e.configurations.push_back(Configuration{params, l});
    }
    std::size_t k = ps.size();
    while (k > 0 && ++idx[k - 1] == ps[k - 1].values.size()) idx[--k] = 0;
    if (k == 0) break;
  }
  return e;
}

}  // namespace

TEST(SpaceOf, TuningFilesGiveTheBruteForceSpaceConfigurationForConfiguration) {
  const std::string examples = kData + "/../../share/examples/kernels/";
  for (const std::string& path :
       {examples + "matmul_tiled.json", examples + "reduction.json", examples + "stencil5.json",
        examples + "stencil7_3d.json", kData + "/fixed_scale.json"}) {
    SCOPED_TRACE(path);
    const auto spec = load_tuning_file(path);
    const Problem p = spec->paper_size();
    const TuneTarget target = target_of(*spec, p);
    const SearchSpace space = make_search_space(*spec, p, spec->whole(p), target);
    const Expected want = brute_force(*spec, p, target);
    ASSERT_EQ(space.size(), want.configurations.size());
    EXPECT_EQ(space.baseline(), want.baseline);
    for (std::size_t i = 0; i < space.size(); ++i) ASSERT_EQ(space.at(i), want.configurations[i]) << i;
    ASSERT_EQ(space.rule().has_value(), want.rule.has_value());
    if (want.rule) {
      EXPECT_EQ(space.at(*space.rule()), *want.rule);
    }
  }
}

// A tuning file `name`.json in `dir` with these parameters and conditions,
// a 1024 NDRange whose local size is searched, and its kernel.
std::string write_file(const test::TempDir& dir, const std::string& name, const json& params, const json& conditions) {
  std::ofstream(dir.path / "k.cl") << "__kernel void k(__global float* out) { out[get_global_id(0)] = 1; }\n";
  const json file{{"General", {{"BenchmarkName", name}}},
                  {"ConfigurationSpace", {{"TuningParameters", params}, {"Conditions", conditions}}},
                  {"KernelSpecification",
                   {{"Language", "OpenCL"},
                    {"KernelName", "k"},
                    {"KernelFile", "k.cl"},
                    {"GlobalSize", {{"X", "1024"}}},
                    {"Arguments",
                     {{{"Name", "out"},
                       {"Type", "float"},
                       {"MemoryType", "Vector"},
                       {"AccessType", "WriteOnly"},
                       {"Size", 1024},
                       {"FillType", "Constant"},
                       {"FillValue", 0}}}}}},
                  {"wstune", {{"LocalSize", "search"}}}};
  const std::string path = (dir.path / (name + ".json")).string();
  std::ofstream(path) << file.dump(2);
  return path;
}

TEST(SpaceOf, ABillionCombinationsFromATuningFile) {
  // Nine parameters of ten values; every other one a multiple of the one
  // before, their sum at most 18: 5,844 valid combinations (counted below
  // by dynamic programming), each with the local sizes of a 1024 NDRange.
  test::TempDir dir;
  json params = json::array();
  std::string sum = "P0";
  json conditions = json::array();
  for (int k = 0; k < 9; ++k) {
    params.push_back({{"Name", fmt::format("P{}", k)}, {"Type", "int"}, {"Values", "list(range(1, 11))"}});
    if (k > 0) sum += fmt::format(" + P{}", k);
    if (k % 2 == 1)
      conditions.push_back({{"Expression", fmt::format("P{} % P{} == 0", k, k - 1)},
                            {"Parameters", {fmt::format("P{}", k - 1), fmt::format("P{}", k)}}});
  }
  conditions.push_back({{"Expression", sum + " <= 18"}, {"Parameters", json::array()}});
  for (int k = 0; k < 9; ++k) conditions.back()["Parameters"].push_back(fmt::format("P{}", k));
  const auto spec = load_tuning_file(write_file(dir, "billion", params, conditions));
  EXPECT_EQ(spec->reference_params(),
            (json{{"P0", 1}, {"P1", 1}, {"P2", 1}, {"P3", 1}, {"P4", 1}, {"P5", 1}, {"P6", 1}, {"P7", 1}, {"P8", 1}}))
      << "the first valid combination in odometer order";
  const Problem p = spec->paper_size();
  const SearchSpace space = make_search_space(*spec, p, spec->whole(p), target_of(*spec, p));
  // Valid combinations: pairs (a, b) with b a multiple of a, sums bounded.
  std::uint64_t valid = 0;
  std::vector<std::uint64_t> by_sum(19, 0);
  by_sum[0] = 1;
  for (int pair = 0; pair < 4; ++pair) {
    std::vector<std::uint64_t> next(19, 0);
    for (int s = 0; s <= 18; ++s)
      for (int a = 1; a <= 10; ++a)
        for (int b = a; b <= 10; b += a)
          if (s + a + b <= 18) next[s + a + b] += by_sum[s];
    by_sum = next;
  }
  for (int s = 0; s <= 18; ++s)
    for (int last = 1; last <= 10; ++last)
      if (s + last <= 18) valid += by_sum[s];
  EXPECT_EQ(valid, 5844u);
  EXPECT_EQ(space.parameter_sets(), valid);
  const std::size_t locals = enumerate_local_sizes(Extent{1024, 1, 1, 1}, target_of(*spec, p).limits).size() + 1;
  EXPECT_EQ(space.size(), valid * locals - 1) << "every set with NULL and each local size, less the baseline";
  for (std::size_t s = 0; s < space.parameter_sets(); s += 97) {
    const json c = space.params_of_set(s);
    int total = 0;
    for (int k = 0; k < 9; ++k) total += c[fmt::format("P{}", k)].get<int>();
    EXPECT_LE(total, 18);
    for (int k = 1; k < 9; k += 2)
      EXPECT_EQ(c[fmt::format("P{}", k)].get<int>() % c[fmt::format("P{}", k - 1)].get<int>(), 0);
  }
}

TEST(SpaceOf, AConditionThatCannotBeEvaluatedIsAnErrorNamingItOnlyWhereBruteForceMeetsIt) {
  test::TempDir dir;
  const json params = json::array({{{"Name", "DIV"}, {"Type", "int"}, {"Values", "[0, 2, 4]"}, {"Default", 2}},
                                   {{"Name", "N"}, {"Type", "int"}, {"Values", "[8, 16]"}, {"Default", 8}}});
  // Unguarded: brute force divides by DIV == 0, so does the solver.
  const json bare = json::array({{{"Expression", "N % DIV == 0"}, {"Parameters", {"N", "DIV"}}}});
  const auto bad = load_tuning_file(write_file(dir, "bare", params, bare));
  const Problem p = bad->paper_size();
  try {
    (void)make_search_space(*bad, p, bad->whole(p), target_of(*bad, p));
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ConfigurationSpace.Conditions[0].Expression"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"DIV\":0"), std::string::npos) << e.what();
  }
  // Guarded by an earlier condition: brute force never divides by zero.
  const json guarded = json::array({{{"Expression", "DIV != 0"}, {"Parameters", {"DIV"}}},
                                    {{"Expression", "N % DIV == 0"}, {"Parameters", {"N", "DIV"}}}});
  const auto ok = load_tuning_file(write_file(dir, "guarded", params, guarded));
  const SearchSpace space = make_search_space(*ok, p, ok->whole(p), target_of(*ok, p));
  EXPECT_EQ(space.parameter_sets(), 4u);  // DIV 2 or 4, N 8 or 16: all divisible
}
