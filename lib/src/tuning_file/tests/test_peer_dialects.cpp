// Issue 36: tuning files as Kernel Tuner's and KTT's users write them. Each
// test is one of the issue's failures, read (and where it matters run on
// PoCL) as the peers read it: kernel signatures whose qualifiers are
// macros, GlobalSizeType CUDA, Kernel Tuner's GridDiv grid and ProblemSize
// expressions, partial Defaults, the readers' dialects of Values,
// Conditions, Search and Device, parameters defined after the OpenCL
// header, written buffers restored before every run, a reference
// configuration that does not build, and the limits of each configuration's
// own build.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <fmt/format.h>

#include "evaluate/trial.hpp"
#include "kernel/kernel.hpp"
#include "search/search.hpp"
#include "test_store_util.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;
using wstune::test::TempDir;

namespace {

struct Files {
  TempDir dir;
  std::string write(const std::string& name, const std::string& text) { return dir.write(name, text); }
  // `j` as k.json next to `source` as k.cl.
  std::string tuning(const json& j, const std::string& source, const std::string& name = "k") {
    write(name + ".cl", source);
    json t = j;
    t["KernelSpecification"]["KernelFile"] = name + ".cl";
    return write(name + ".json", t.dump(2));
  }
};

// A 1-D file: `params` (JSON array of T1 parameters), `args` (Arguments).
json file_1d(const json& params, const json& args, const json& ks_extra = json::object()) {
  json j = {{"ConfigurationSpace", {{"TuningParameters", params}}},
            {"KernelSpecification",
             {{"Language", "OpenCL"},
              {"KernelName", "k"},
              {"GlobalSize", {{"X", "64"}}},
              {"LocalSize", {{"X", "8"}}},
              {"Arguments", args}}}};
  for (const auto& [k, v] : ks_extra.items()) j["KernelSpecification"][k] = v;
  return j;
}

json vector_arg(const std::string& name, const std::string& access, std::size_t size = 64) {
  return {{"Name", name}, {"Type", "float"},        {"MemoryType", "Vector"}, {"AccessType", access},
          {"Size", size}, {"FillType", "Constant"}, {"FillValue", 0.0}};
}

std::string error_of(const std::string& path) {
  try {
    (void)load_tuning_file(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// KTT's CoulombSum kernels: the pointer qualifiers are macros of a parameter.
const char* kMacroQualifiers = R"CL(
#if USE_CONSTANT_MEMORY == 0
    #define MEMORY_TYPE_AOS __global const
#else
    #define MEMORY_TYPE_AOS __constant
#endif
#if VECTOR_TYPE == 1
    typedef float vector;
#else
    typedef float2 vector;
#endif
__kernel void k(MEMORY_TYPE_AOS vector* atomInfo, int n, __global float* out) {
  out[get_global_id(0)] = n;
}
)CL";

json coulomb_like() {
  return file_1d(json::array({{{"Name", "USE_CONSTANT_MEMORY"}, {"Type", "uint"}, {"Values", "[0, 1]"}},
                              {{"Name", "VECTOR_TYPE"}, {"Type", "uint"}, {"Values", "[1, 2]"}}}),
                 json::array({vector_arg("atomInfo", "ReadOnly"),
                              {{"Type", "int32"}, {"MemoryType", "Scalar"}, {"FillValue", 3}},
                              vector_arg("out", "WriteOnly")}));
}

}  // namespace

TEST(PeerDialects, QualifiersThatAreMacrosAreReadAfterExpansion) {
  Files f;
  const auto k = load_tuning_file(f.tuning(coulomb_like(), kMacroQualifiers));
  EXPECT_EQ(k->tuning_parameters().size(), 2u);
  // A name neither a macro nor OpenCL's (a typedef of a pointer) is left to the build.
  const std::string typedefed =
      "typedef __global float* fptr;\n__kernel void k(fptr a, int n, __global float* out) {}\n";
  EXPECT_EQ(error_of(f.tuning(coulomb_like(), typedefed, "t")), "");
  // What contradicts an argument once expanded is still refused, naming it.
  const std::string local = "#define MEM __local\n__kernel void k(MEM float* a, int n, __global float* out) {}\n";
  const std::string msg = error_of(f.tuning(coulomb_like(), local, "l"));
  EXPECT_NE(msg.find("Arguments[0]: 'atomInfo' is a Vector argument but the kernel's parameter 0 is 'MEM float* a'"),
            std::string::npos)
      << msg;
  const std::string scalar =
      "#define MEM __global\n__kernel void k(__global float* a, MEM int* n, __global float* o) {}\n";
  EXPECT_NE(error_of(f.tuning(coulomb_like(), scalar, "s")).find("Arguments[1]"), std::string::npos);
}

TEST(PeerDialects, GlobalSizeTypeCudaCountsWorkGroups) {
  Files f;
  json j = file_1d(json::array({{{"Name", "BS"}, {"Type", "int"}, {"Values", "[32, 64]"}}}),
                   json::array({vector_arg("out", "WriteOnly", 4096)}),
                   {{"GlobalSizeType", "CUDA"}, {"GlobalSize", {{"X", "4096 // BS"}}}, {"LocalSize", {{"X", "BS"}}}});
  const auto k = load_tuning_file(f.tuning(j, "__kernel void k(__global float* out) {}\n"));
  EXPECT_EQ(k->global_size(with_params(k->paper_size(), json{{"BS", 64}})), (Extent{4096, 1, 1, 1}));
  j["KernelSpecification"]["GlobalSizeType"] = "OpenCL";
  const auto o = load_tuning_file(f.tuning(j, "__kernel void k(__global float* out) {}\n", "o"));
  EXPECT_EQ(o->global_size(with_params(o->paper_size(), json{{"BS", 64}})), (Extent{64, 1, 1, 1}));
  j["KernelSpecification"]["GlobalSizeType"] = "SYCL";
  EXPECT_NE(error_of(f.tuning(j, "__kernel void k(__global float* out) {}\n", "s")).find("GlobalSizeType: 'SYCL'"),
            std::string::npos);
}

TEST(PeerDialects, GridDivAndProblemSizeExpressionsFollowKernelTuner) {
  Files f;
  // Kernel Tuner's stencil: ceil(ProblemSize / GridDiv) work-groups of the block size.
  json j = file_1d(json::array({{{"Name", "block_size_x"}, {"Type", "int"}, {"Values", "[96, 128]"}},
                                {{"Name", "block_size_y"}, {"Type", "int"}, {"Values", "[1, 4]"}}}),
                   json::array({vector_arg("out", "WriteOnly", 4096)}),
                   {{"ProblemSize", {1000, 30}},
                    {"GridDivX", {"block_size_x"}},
                    {"GlobalSize", {{"X", "this is not read with GridDiv"}}},
                    {"LocalSize", {{"X", "block_size_x"}, {"Y", "block_size_y"}}}});
  j["KernelSpecification"]["GridDivY"] = json::array({"block_size_y"});
  const auto k = load_tuning_file(f.tuning(j, "__kernel void k(__global float* out) {}\n"));
  EXPECT_EQ(k->dims(), 2u);
  EXPECT_EQ(k->global_size(with_params(k->paper_size(), json{{"block_size_x", 96}, {"block_size_y", 4}})),
            (Extent{1056, 32, 1, 2}));  // ceil(1000/96) = 11 groups of 96; ceil(30/4) = 8 groups of 4
  // Kernel Tuner's reduction: ProblemSize names parameters, GridDivX defaults to block_size_x.
  json r = file_1d(json::array({{{"Name", "block_size_x"}, {"Type", "int"}, {"Values", "[32, 64]"}},
                                {{"Name", "num_blocks"}, {"Type", "int"}, {"Values", "[8, 16]"}}}),
                   json::array({vector_arg("out", "WriteOnly", 16)}),
                   {{"ProblemSize", {"num_blocks*block_size_x"}}, {"LocalSize", {{"X", "block_size_x"}}}});
  r["KernelSpecification"]["GridDivX"] = json::array();
  // GridDivY names nothing defined: a dimension beyond ProblemSize is one group, as in Kernel Tuner.
  r["KernelSpecification"]["GridDivY"] = json::array({"block_size_y"});
  const auto red = load_tuning_file(f.tuning(r, "__kernel void k(__global float* out) {}\n", "r"));
  EXPECT_EQ(red->global_size(with_params(red->paper_size(), json{{"block_size_x", 64}, {"num_blocks", 16}})),
            (Extent{1024, 1, 1, 1}));
  EXPECT_EQ(red->paper_size().text, "fixed") << "an expression of the parameters is no size to bind";
  EXPECT_THROW((void)red->parse_size("4096"), UsageError);
  // Without ProblemSize there is nothing to divide.
  json none = r;
  none["KernelSpecification"].erase("ProblemSize");
  EXPECT_NE(error_of(f.tuning(none, "__kernel void k(__global float* out) {}\n", "n")).find("GridDivX"),
            std::string::npos);
}

TEST(PeerDialects, AConditionOnAProblemSizeOfParametersReadsEachCombinationsProblemSize) {
  Files f;
  // ProblemSize = num_blocks * block_size_x; the condition bounds it: the
  // space solver must see each combination's ProblemSize, not the reference's.
  json r = file_1d(json::array({{{"Name", "block_size_x"}, {"Type", "int"}, {"Values", "[32, 64, 128]"}},
                                {{"Name", "num_blocks"}, {"Type", "int"}, {"Values", "[8, 16, 32]"}}}),
                   json::array({vector_arg("out", "WriteOnly", 16)}),
                   {{"ProblemSize", {"num_blocks*block_size_x"}}, {"LocalSize", {{"X", "block_size_x"}}}});
  r["KernelSpecification"]["GridDivX"] = json::array();
  r["ConfigurationSpace"]["Conditions"] =
      json::array({{{"Expression", "ProblemSize[0] <= 1024"}, {"Parameters", {"block_size_x", "num_blocks"}}}});
  const auto k = load_tuning_file(f.tuning(r, "__kernel void k(__global float* out) {}\n"));
  const Problem p = k->paper_size();
  std::set<std::pair<int, int>> kept;
  const SearchSpace space =
      make_search_space(*k, p, k->whole(p), make_tune_target(*k, DeviceInfo{}, 0, 0, p, k->whole(p)));
  for (std::size_t s = 0; s < space.parameter_sets(); ++s) {
    const json v = space.params_of_set(s);
    kept.emplace(v.at("block_size_x").get<int>(), v.at("num_blocks").get<int>());
  }
  kept.emplace(32, 8);  // the reference (first valid), left out of the space as the baseline
  const std::set<std::pair<int, int>> want{{32, 8}, {32, 16}, {32, 32}, {64, 8}, {64, 16}, {128, 8}};
  EXPECT_EQ(kept, want);
}

TEST(PeerDialects, DefaultsNameTheReferenceWhereGiven) {
  Files f;
  json j = file_1d(json::array({{{"Name", "A"}, {"Type", "int"}, {"Values", "[1, 2, 4]"}, {"Default", 4}},
                                {{"Name", "B"}, {"Type", "int"}, {"Values", "[1, 2, 3]"}},
                                {{"Name", "C"}, {"Type", "int"}, {"Values", "[5, 6]"}, {"Default", 7}}}),
                   json::array({vector_arg("out", "WriteOnly")}));
  j["ConfigurationSpace"]["Conditions"] = json::array({{{"Expression", "A * B != 4"}, {"Parameters", {"A", "B"}}}});
  const std::string src = "__kernel void k(__global float* out) {}\n";
  // A's Default holds, B is the first that satisfies the Conditions with it, C's Default is not a value.
  EXPECT_EQ(read_tuning_file(f.tuning(j, src)).reference_params, (json{{"A", 4}, {"B", 2}, {"C", 5}}));
  // Defaults the Conditions forbid together: the first valid configuration.
  j["ConfigurationSpace"]["Conditions"] = json::array({{{"Expression", "A < 4"}}});
  EXPECT_EQ(read_tuning_file(f.tuning(j, src, "d")).reference_params, (json{{"A", 1}, {"B", 1}, {"C", 5}}));
}

TEST(PeerDialects, ValuesConditionsSearchBudgetDeviceAndReferenceDialects) {
  Files f;
  json j = file_1d(json::array({{{"Name", "T"}, {"Type", "int"}, {"Values", "(1, 2, 4)"}},
                                {{"Name", "R"}, {"Type", "int"}, {"Values", "range(3, 9, 2)"}},
                                {{"Name", "D"}, {"Type", "double"}, {"Values", "[0.5]"}}}),
                   json::array({vector_arg("out", "WriteOnly")}), {{"Device", {{"Name", "1"}}}});
  // KTT's default comparison for a reference that names none.
  j["KernelSpecification"]["ReferenceArguments"] =
      json::array({{{"Name", "r"}, {"TargetName", "out"}, {"FillType", "Constant"}, {"FillValue", 0.0}}});
  // KTT binds only Parameters; Kernel Tuner does not read them: a stale name is no error.
  j["ConfigurationSpace"]["Conditions"] =
      json::array({{{"Expression", "T <= R"}, {"Parameters", {"T", "R", "old_name"}}}});
  j["Search"] = {{"Name", "skopt"},
                 {"Attributes", {{{"Name", "Seed"}, {"Value", "7"}}, {{"Name", "max_fevals"}, {"Value", 20}}}}};
  const TuningFile t = read_tuning_file(f.tuning(j, "__kernel void k(__global float* out) {}\n"));
  EXPECT_EQ(t.parameters[0].values, (std::vector<json>{1, 2, 4}));
  EXPECT_EQ(t.parameters[1].values, (std::vector<json>{3, 5, 7}));
  EXPECT_EQ(t.parameters[2].type, "float");
  EXPECT_EQ(t.strategy, "bayes");
  EXPECT_EQ(t.search_seed, 7u);
  EXPECT_EQ(t.budget_count, 20u);
  EXPECT_EQ(t.device, "0:1") << "Kernel Tuner's Device Name is its device number";
  ASSERT_EQ(t.references.size(), 1u);
  EXPECT_EQ(t.references[0].method, ValidationMethod::side_by_side);
  EXPECT_EQ(t.references[0].threshold, 1e-4);
}

// ---- runs on PoCL -----------------------------------------------------------------------

TEST(PeerDialects, ParametersAreDefinedAfterTheOpenCLHeader) {
  Files f;
  // Kernel Tuner's own T1 test file tunes a parameter named read_only: as
  // `-D read_only=0` it breaks the implementation's header, as a #define
  // after it the kernel builds.
  json j = file_1d(json::array({{{"Name", "read_only"}, {"Type", "int"}, {"Values", "[0, 1]"}}}),
                   json::array({vector_arg("out", "WriteOnly")}));
  const auto k =
      load_tuning_file(f.tuning(j, "__kernel void k(__global float* out) { out[get_global_id(0)] = read_only; }\n"));
  const Problem p = with_params(k->paper_size(), json{{"read_only", 1}});
  EXPECT_EQ(k->build_options(p), "");
  EXPECT_EQ(k->source_defines(p), "#define read_only 1\n");
  EvaluatorConfig cfg;
  cfg.device = "cpu";
  InProcessEvaluator ev(*k, k->paper_size(), cfg);
  for (int v : {0, 1}) {
    const Trial t = ev.evaluate(Configuration{json{{"read_only", v}}, Extent{8, 1, 1}}, {0, 1});
    // 1 differs from the reference configuration's 0: a correctness failure, after a build.
    EXPECT_EQ(t.status, v == 0 ? TrialStatus::correct : TrialStatus::correctness) << v << ": " << t.error;
  }
}

TEST(PeerDialects, WrittenBuffersAreRestoredBeforeEveryRun) {
  Files f;
  // KTT's CoulombSum3d declares its accumulating output WriteOnly.
  json j = file_1d(json::array({{{"Name", "P"}, {"Type", "int"}, {"Values", "[1, 2]"}}}),
                   json::array({vector_arg("out", "WriteOnly")}));
  j["KernelSpecification"]["ReferenceArguments"] = json::array({{{"Name", "ref"},
                                                                 {"TargetName", "out"},
                                                                 {"FillType", "Constant"},
                                                                 {"FillValue", 1.0},
                                                                 {"ValidationMethod", "SideBySideComparison"},
                                                                 {"ValidationThreshold", 0}}});
  const auto k =
      load_tuning_file(f.tuning(j, "__kernel void k(__global float* out) { out[get_global_id(0)] += 1.0f; }\n"));
  EvaluatorConfig cfg;
  cfg.device = "cpu";
  InProcessEvaluator ev(*k, k->paper_size(), cfg);
  const Trial t = ev.evaluate(Configuration{json{{"P", 2}}, Extent{8, 1, 1}}, {2, 3});  // 2 warm-ups, 3 runs
  EXPECT_TRUE(t.ok()) << t.error;
  EXPECT_TRUE(t.verified);
}

TEST(PeerDialects, AReferenceThatDoesNotBuildIsRecordedAndReplaced) {
  Files f;
  // Kernel Tuner's reduction example: loop_unroll_factor 0 is `#pragma unroll 0`, which does not build.
  json j = file_1d(json::array({{{"Name", "U"}, {"Type", "int"}, {"Values", "[0, 1, 2]"}}}),
                   json::array({vector_arg("out", "WriteOnly")}));
  const auto k = load_tuning_file(f.tuning(j, R"CL(
#if U == 0
#error "no unrolling by 0"
#endif
__kernel void k(__global float* out) { out[get_global_id(0)] = 2.0f; }
)CL"));
  EXPECT_EQ(k->reference_params(), (json{{"U", 0}}));
  EvaluatorConfig cfg;
  cfg.device = "cpu";
  InProcessEvaluator ev(*k, k->paper_size(), cfg);
  EXPECT_EQ(ev.target().reference_params, (json{{"U", 1}}));
  EXPECT_EQ(ev.space().baseline().params, (json{{"U", 1}}));
  auto s = make_exhaustive_searcher();
  TuneOptions o;
  o.timing = {0, 1};
  o.tiebreak_rounds = 0;
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  ASSERT_GE(r.trials.size(), 3u);
  EXPECT_EQ(r.trials[0].params, (json{{"U", 0}}));
  EXPECT_EQ(r.trials[0].status, TrialStatus::compile) << "the rejected reference is recorded first";
  EXPECT_EQ(r.baseline.params, (json{{"U", 1}}));
  EXPECT_TRUE(r.baseline.ok()) << r.baseline.error;
  EXPECT_TRUE(r.best.ok());
  EXPECT_EQ(r.evaluations, 3u) << "every configuration once";
}

TEST(PeerDialects, EachConfigurationsOwnBuildBoundsItsLocalSize) {
  Files f;
  json j = file_1d(json::array({{{"Name", "BS"}, {"Type", "int"}, {"Values", "[64, 512]"}}}),
                   json::array({vector_arg("out", "WriteOnly", 4096)}),
                   {{"GlobalSize", {{"X", "4096"}}}, {"LocalSize", {{"X", "BS"}}}});
  const auto k = load_tuning_file(f.tuning(j, "__kernel void k(__global float* out) {}\n"));
  DeviceInfo info;
  info.max_work_group_size = 1024;
  info.max_work_item_sizes = {1024, 1024, 64};
  const Problem p = k->paper_size();
  // The reference's build said 256: another parameter set is another program, its own build decides.
  const TuneTarget t = make_tune_target(*k, info, 256, 4096, p, k->whole(p));
  EXPECT_EQ(t.limits.kernel_work_group_size, 0u);
  EXPECT_EQ(t.limits.kernel_local_mem_bytes, 0u);
  EXPECT_EQ(make_search_space(*k, p, k->whole(p), t).size(), 1u) << "BS=512 is in the space";
  // wstune's own kernels have one program: its value stays in the target and
  // bounds the paper's rule, while the space holds every shape the device
  // allows (NVIDIA answers 256 yet runs larger groups; a refusal is data).
  const KernelSpec& matmul = kernel_spec("matmul");
  const Problem mp = matmul.parse_size("64");
  const TuneTarget mt = make_tune_target(matmul, info, 256, 0, mp, matmul.whole(mp));
  EXPECT_EQ(mt.limits.kernel_work_group_size, 256u);
  const SearchSpace ms = make_search_space(matmul, mp, matmul.whole(mp), mt);
  std::size_t above = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const LocalSize& l = ms.local(i);
    if (!l) continue;
    if (l->count() > 256) ++above;
    EXPECT_LE(l->count(), 1024u);
  }
  EXPECT_GT(above, 0u) << "64x64: 32x16 and 32x32 are within the device's 1024";
  ASSERT_TRUE(ms.rule());
  EXPECT_LE(ms.local(*ms.rule())->count(), 256u) << "the rule keeps within the build's value";
}
