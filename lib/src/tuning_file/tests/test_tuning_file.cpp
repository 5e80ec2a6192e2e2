// The T1 tuning-file reader and described kernels: conformance from
// hand-written files (every field wstune reads), the bad-input list (each an
// error naming the file, the JSON path and the fix), and runs on PoCL
// (verification against references and the reference configuration, a
// configuration made wrong on purpose, ReadWrite restore, __local sizes).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "evaluate/trial.hpp"
#include "runner/runner.hpp"
#include "search/search.hpp"
#include "test_store_util.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;
using wstune::test::TempDir;

namespace {

const char* kSaxpy = R"CL(
// y = a*x + y, in place; BUG=1 writes a wrong value on purpose.
__kernel void saxpy(const float a, const __global float* x, __global float* y, const int n) {
  const int i = get_global_id(0) * WPT;
  for (int k = 0; k < WPT; k++) {
    if (i + k < n) y[i + k] = a * x[i + k] + y[i + k] + (BUG ? 1.0f : 0.0f);
  }
}
)CL";

// A complete, valid file: every field wstune reads.
json saxpy_file() {
  return json::parse(R"JSON({
    "General": {"BenchmarkName": "saxpy", "OutputFormat": "JSON"},
    "ConfigurationSpace": {
      "TuningParameters": [
        {"Name": "WPT", "Type": "int", "Values": "[2**k for k in range(3)]", "Default": 1},
        {"Name": "BUG", "Type": "int", "Values": [0, 1], "Default": 0},
        {"Name": "SCALE", "Type": "float", "Values": "[1.0]"},
        {"Name": "FAST", "Type": "bool", "Values": "[True]"},
        {"Name": "MODE", "Type": "string", "Values": "['plain']"}
      ],
      "Conditions": [{"Parameters": ["WPT"], "Expression": "ProblemSize[0] % WPT == 0 and WPT <= N"}]
    },
    "Search": {"Name": "brute_force", "Attributes": [{"Name": "Seed", "Value": 7}]},
    "Budget": [{"Type": "ConfigurationCount", "BudgetValue": 50}, {"Type": "TuningDuration", "BudgetValue": 30}],
    "KernelSpecification": {
      "Language": "OpenCL",
      "KernelName": "saxpy",
      "KernelFile": "saxpy.cl",
      "CompilerOptions": ["-cl-fast-relaxed-math"],
      "Device": {"PlatformId": 0, "DeviceId": 0},
      "ProblemSize": [4096],
      "GlobalSize": {"X": "ProblemSize[0] // WPT", "Y": "1", "Z": "1"},
      "LocalSize": {"X": "8", "Y": "1", "Z": "1"},
      "Arguments": [
        {"Name": "a", "Type": "float", "MemoryType": "Scalar", "FillValue": 2.0},
        {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "ProblemSize[0]",
         "FillType": "Generator", "DataSource": "i % 5"},
        {"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": "ProblemSize[0]",
         "FillType": "Constant", "FillValue": 1.0},
        {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 4096}
      ],
      "ReferenceArguments": [
        {"Name": "y_ref", "TargetName": "y", "FillType": "Generator", "DataSource": "2 * (i % 5) + 1",
         "ValidationMethod": "SideBySideComparison", "ValidationThreshold": 0}
      ]
    },
    "wstune": {"LocalSize": "search", "GuardsBounds": true, "Sizes": {"N": 8}, "ScalarValues": {"n": "ProblemSize[0]"}}
  })JSON");
}

struct Files {
  TempDir dir;
  std::string write(const std::string& name, const std::string& text) { return dir.write(name, text); }
  std::string tuning(const json& j, const std::string& name = "saxpy.json") {
    write("saxpy.cl", kSaxpy);
    return write(name, j.dump(2));
  }
};

// The UsageError text of reading `j`, or "" when it reads.
std::string error_of(Files& f, const json& j) {
  try {
    (void)load_tuning_file(f.tuning(j));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TuningFile, ReadsEveryFieldOfAValidFile) {
  Files f;
  const std::string path = f.tuning(saxpy_file());
  const TuningFile t = read_tuning_file(path);
  EXPECT_EQ(t.kernel_name, "saxpy");
  EXPECT_NE(t.source.find("__kernel void saxpy"), std::string::npos);
  ASSERT_EQ(t.parameters.size(), 5u);
  EXPECT_EQ(t.parameters[0].values, (std::vector<json>{1, 2, 4}));
  EXPECT_EQ(t.parameters[1].values, (std::vector<json>{0, 1}));  // a JSON list is accepted too
  EXPECT_EQ(t.parameters[2].values, (std::vector<json>{1.0}));
  EXPECT_EQ(t.parameters[3].values, (std::vector<json>{true}));
  EXPECT_EQ(t.parameters[4].values, (std::vector<json>{"plain"}));
  // Default on some parameters only names no reference: the first valid configuration is it.
  EXPECT_EQ(t.reference_params, (json{{"WPT", 1}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}}));
  EXPECT_EQ(t.conditions.size(), 1u);
  EXPECT_EQ(t.dims, 1u) << "trailing \"1\"s add no dimensions";
  EXPECT_TRUE(t.search_local);
  EXPECT_TRUE(t.guards_bounds);
  EXPECT_EQ(t.compiler_options, (std::vector<std::string>{"-cl-fast-relaxed-math"}));
  ASSERT_EQ(t.arguments.size(), 4u);
  EXPECT_EQ(t.arguments[0].kind, ArgumentKind::scalar);
  EXPECT_EQ(t.arguments[2].access, Access::read_write);
  EXPECT_EQ(t.arguments[1].fill.type, FillType::generator);
  EXPECT_EQ(t.arguments[3].value_expression, "ProblemSize[0]");
  ASSERT_EQ(t.references.size(), 1u);
  EXPECT_EQ(t.references[0].method, ValidationMethod::side_by_side);
  EXPECT_EQ(t.references[0].threshold, 0);
  EXPECT_EQ(t.strategy, "exhaustive");
  EXPECT_EQ(t.search_seed, 7u);
  EXPECT_EQ(t.budget_count, 50u);
  EXPECT_EQ(t.budget_seconds, 30.0);
  EXPECT_EQ(t.device, "0:0");
  EXPECT_EQ(t.problem_size, (std::vector<std::size_t>{4096}));
  EXPECT_EQ(t.size_variables.size(), 1u);
}

TEST(TuningFile, SizesBindFromTheCommandLine) {
  Files f;
  const auto k = load_tuning_file(f.tuning(saxpy_file()));
  EXPECT_EQ(k->paper_size().text, "4096,N=8");
  const Problem p = k->parse_size("1000,N=2");
  EXPECT_EQ(p.text, "1000,N=2");
  EXPECT_EQ(k->parse_size("ProblemSize[0]=64").text, "64,N=8");
  EXPECT_EQ(k->problem_extent(p), (Extent{1000, 1, 1}));
  for (const char* bad : {"0", "12x4", "M=3", "64,,N=2", "ProblemSize[1]=4", "N=-1", ""})
    EXPECT_THROW((void)k->parse_size(bad), UsageError) << bad;
  // The constraints see the sizes: WPT <= N.
  EXPECT_FALSE(k->satisfies_constraints(with_params(
      k->parse_size("4096,N=2"), json{{"WPT", 4}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}})));
  // CompilerOptions as build options; the parameters' values as #define lines before the source.
  EXPECT_EQ(k->build_options(with_params(p, json{{"WPT", 2}, {"BUG", 0}})), "-cl-fast-relaxed-math");
  EXPECT_EQ(k->source_defines(with_params(p, json{{"WPT", 2}, {"BUG", 0}})), "#define BUG 0\n#define WPT 2\n");
}

TEST(TuningFile, ThreeDimensionsAndLocalSizesFromParameters) {
  Files f;
  json j = saxpy_file();
  j["KernelSpecification"]["GlobalSize"] = {{"X", "ProblemSize[0] // WPT"}, {"Y", "2"}, {"Z", "N"}};
  j["KernelSpecification"]["LocalSize"] = {{"X", "WPT"}, {"Y", "1"}, {"Z", "2"}};
  j.erase("wstune");
  j["wstune"] = {{"Sizes", {{"N", 4}}}, {"ScalarValues", {{"n", "ProblemSize[0]"}}}};
  const auto k = load_tuning_file(f.tuning(j));
  EXPECT_EQ(k->dims(), 3u);
  const Problem p =
      with_params(k->paper_size(), json{{"WPT", 2}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}});
  EXPECT_EQ(k->global_size(p), (Extent{2048, 2, 4, 3}));
  EXPECT_EQ(k->parameter_local(p), LocalSize(Extent{2, 1, 2, 3}));
}

TEST(TuningFile, BadInputNamesTheFileThePathAndTheFix) {
  Files f;
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* expect;  // a fragment of the message
  };
  const std::vector<Case> cases{
      {"missing required field", [](json& j) { j["KernelSpecification"].erase("KernelName"); },
       "KernelSpecification.KernelName: missing"},
      {"CUDA", [](json& j) { j["KernelSpecification"]["Language"] = "CUDA"; }, "OpenCL kernels only"},
      {"unknown parameter type", [](json& j) { j["ConfigurationSpace"]["TuningParameters"][0]["Type"] = "int32"; },
       "TuningParameters[0].Type: 'int32' is not a T1 type"},
      {"unknown argument type", [](json& j) { j["KernelSpecification"]["Arguments"][1]["Type"] = "float3"; },
       "Arguments[1].Type: unknown argument type 'float3'"},
      {"bad expression", [](json& j) { j["KernelSpecification"]["GlobalSize"]["X"] = "ProblemSize[0] // lambda: 2"; },
       "GlobalSize.X"},
      {"unsupported construct",
       [](json& j) { j["ConfigurationSpace"]["Conditions"][0]["Expression"] = "WPT.real > 0"; }, "attribute access"},
      {"unknown name", [](json& j) { j["KernelSpecification"]["GlobalSize"]["X"] = "ProblemSize[0] // TILE"; },
       "names 'TILE', which is not"},
      {"parameter with no values", [](json& j) { j["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[]"; },
       "TuningParameters[1].Values: gives no values"},
      {"value of the wrong type",
       [](json& j) { j["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[0, 1.5]"; },
       "1.5 is not a value of type int"},
      {"conditions leave nothing",
       [](json& j) {
         j["ConfigurationSpace"]["Conditions"][0]["Expression"] = "WPT > 100";
         j["ConfigurationSpace"]["TuningParameters"][0].erase("Default");
       },
       "leave no configuration"},
      {"missing kernel file", [](json& j) { j["KernelSpecification"]["KernelFile"] = "nope.cl"; },
       "KernelFile: 'nope.cl' does not exist"},
      {"kernel not in the source", [](json& j) { j["KernelSpecification"]["KernelName"] = "daxpy"; },
       "no '__kernel void daxpy(...)'"},
      {"too few arguments", [](json& j) { j["KernelSpecification"]["Arguments"].erase(0); },
       "lists 3 arguments but __kernel saxpy"},
      {"argument kind mismatch",
       [](json& j) {
         j["KernelSpecification"]["Arguments"][0]["MemoryType"] = "Vector";
         j["KernelSpecification"]["Arguments"][0]["Size"] = 4;
       },
       "Arguments[0]: 'a' is a Vector argument but the kernel's parameter 0 is 'const float a'"},
      {"reference of a read-only buffer",
       [](json& j) { j["KernelSpecification"]["ReferenceArguments"][0]["TargetName"] = "x"; },
       "ReferenceArguments[0].TargetName: 'x' is not a Vector argument the kernel writes"},
      {"unknown wstune key", [](json& j) { j["wstune"]["LocalSizes"] = "search"; }, "wstune.LocalSizes: unknown"},
      {"Script fill", [](json& j) { j["KernelSpecification"]["Arguments"][1]["FillType"] = "Script"; },
       "'Script' is not supported"},
      {"bad budget", [](json& j) { j["Budget"][0]["Type"] = "Iterations"; }, "Budget[0].Type"},
      {"unknown search", [](json& j) { j["Search"]["Name"] = "Oracle"; }, "Search.Name: 'Oracle' is not a search"},
      {"reference violates conditions",
       [](json& j) {
         j["wstune"]["ReferenceConfiguration"] = {
             {"WPT", 4}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}};
         j["wstune"]["Sizes"]["N"] = 2;
       },
       "violates the Conditions"},
      {"deep nesting",
       [](json& j) {
         json deep = 1;
         for (int i = 0; i < 100; ++i) deep = json::array({deep});
         j["General"]["x"] = deep;
       },
       "nested"},
  };
  for (const Case& c : cases) {
    json j = saxpy_file();
    c.edit(j);
    const std::string msg = error_of(f, j);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": " << msg;
    EXPECT_NE(msg.find("saxpy.json"), std::string::npos) << c.what << ": the file is named: " << msg;
  }
  // A reference file of the wrong size.
  f.write("y.bin", std::string(100, '\0'));
  json j = saxpy_file();
  j["KernelSpecification"]["ReferenceArguments"][0]["FillType"] = "BinaryRaw";
  j["KernelSpecification"]["ReferenceArguments"][0]["DataSource"] = "y.bin";
  EXPECT_NE(error_of(f, j).find("has 100 bytes, but y (4096 elements of float) needs 16384"), std::string::npos)
      << error_of(f, j);
  // Not JSON.
  const std::string bad = f.write("bad.json", "{\"ConfigurationSpace\": ");
  EXPECT_THROW((void)load_tuning_file(bad), UsageError);
}

TEST(TuningFile, FillsAndValidationMethods) {
  Files f;
  // BinaryRaw input: 16 floats.
  std::vector<float> raw(16);
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<float>(i) * 0.5f;
  f.write("x.bin", std::string(reinterpret_cast<const char*>(raw.data()), raw.size() * sizeof(float)));
  json j = saxpy_file();
  j["KernelSpecification"]["ProblemSize"] = {16};
  j["KernelSpecification"]["Arguments"][1]["FillType"] = "BinaryRaw";
  j["KernelSpecification"]["Arguments"][1]["DataSource"] = "x.bin";
  j["KernelSpecification"]["Arguments"][2]["FillType"] = "Random";
  j["KernelSpecification"]["Arguments"][2]["FillValue"] = 10.0;
  j["KernelSpecification"]["Arguments"][2]["RandomSeed"] = 3;
  const auto k = load_tuning_file(f.tuning(j));
  const auto in = k->generate_inputs(k->paper_size(), 42);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].as<float>()[5], 2.5f);
  for (float v : in[1].as<float>()) EXPECT_TRUE(v >= 0 && v < 10);
  EXPECT_EQ(k->generate_inputs(k->paper_size(), 99)[1], in[1]) << "RandomSeed fixes the data";
  // The three validation methods.
  HostBuffer ref = HostBuffer::of({1.f, 2.f, 4.f});
  HostBuffer out = HostBuffer::of({1.f, 2.1f, 4.f});
  const char* methods[] = {"AbsoluteDifference", "SideBySideComparison", "SideBySideRelativeComparison"};
  const double thresholds_ok[] = {0.11, 0.11, 0.051};
  const double thresholds_bad[] = {0.09, 0.09, 0.049};
  for (int m = 0; m < 3; ++m) {
    for (int pass = 0; pass < 2; ++pass) {
      json jm = saxpy_file();
      jm["KernelSpecification"]["ProblemSize"] = {3};
      jm["KernelSpecification"]["ReferenceArguments"][0]["ValidationMethod"] = methods[m];
      jm["KernelSpecification"]["ReferenceArguments"][0]["ValidationThreshold"] =
          pass ? thresholds_ok[m] : thresholds_bad[m];
      jm["ConfigurationSpace"]["Conditions"] = json::array();
      const auto km = load_tuning_file(f.tuning(jm, fmt::format("m{}{}.json", m, pass)));
      EXPECT_EQ(km->verify(km->paper_size(), {out}, {ref}).ok, pass == 1) << methods[m] << " " << pass;
    }
  }
}

TEST(TuningFile, ConfigurationsRunAndVerifyOnPoCL) {
  Files f;
  const auto k = load_tuning_file(f.tuning(saxpy_file()));
  EvaluatorConfig cfg;
  cfg.device = "cpu";
  InProcessEvaluator ev(*k, k->paper_size(), cfg);
  const SearchSpace& space = ev.space();
  // WPT in {1,2,4} x BUG in {0,1}, each with NULL and the shapes; the baseline is WPT=1, BUG=0, NULL.
  EXPECT_EQ(space.baseline().params["WPT"], 1);
  EXPECT_FALSE(space.baseline().local);
  const TimingOptions t{1, 3};
  // ReadWrite y is restored before every run: after warm-up + 3 runs it still equals one run's output.
  const Trial good = ev.evaluate(
      Configuration{json{{"WPT", 2}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}}, Extent{8, 1, 1}},
      t);
  EXPECT_TRUE(good.ok()) << good.error;
  EXPECT_TRUE(good.verified);
  EXPECT_GT(good.compile_ms, 0) << "the first run of a parameter set builds its program";
  // A configuration made wrong on purpose is recorded as correctness.
  const Trial wrong = ev.evaluate(
      Configuration{json{{"WPT", 2}, {"BUG", 1}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}}, Extent{8, 1, 1}},
      t);
  EXPECT_EQ(wrong.status, TrialStatus::correctness) << wrong.error;
  EXPECT_NE(wrong.error.find("SideBySideComparison of y"), std::string::npos) << wrong.error;
  // Same parameters again: no rebuild.
  const Trial again = ev.evaluate(
      Configuration{json{{"WPT", 2}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}}, Extent{16, 1, 1}},
      t);
  EXPECT_TRUE(again.ok()) << again.error;
  EXPECT_EQ(again.compile_ms, 0);
  // A whole tune never answers the wrong configuration.
  auto s = make_exhaustive_searcher();
  TuneOptions o;
  o.timing = {0, 2};
  o.tiebreak_rounds = 0;
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  ASSERT_TRUE(r.best.ok());
  EXPECT_EQ(r.best.params["BUG"], 0);
  unsigned wrong_trials = 0;
  for (const Trial& tr : r.trials) wrong_trials += tr.params["BUG"] == 1 && tr.status == TrialStatus::correctness;
  EXPECT_EQ(wrong_trials, r.trials.size() / 2) << "every BUG=1 configuration fails verification";
}

TEST(TuningFile, WithoutReferenceTheReferenceConfigurationDecides) {
  Files f;
  json j = saxpy_file();
  j["KernelSpecification"].erase("ReferenceArguments");
  const auto k = load_tuning_file(f.tuning(j));
  EXPECT_FALSE(k->has_reference());
  EvaluatorConfig cfg;
  cfg.device = "cpu";
  InProcessEvaluator ev(*k, k->paper_size(), cfg);
  const json base{{"WPT", 1}, {"BUG", 0}, {"SCALE", 1.0}, {"FAST", true}, {"MODE", "plain"}};
  json wrong = base;
  wrong["BUG"] = 1;
  EXPECT_TRUE(ev.evaluate(Configuration{base, Extent{4, 1, 1}}, {0, 1}).ok());
  EXPECT_EQ(ev.evaluate(Configuration{wrong, Extent{4, 1, 1}}, {0, 1}).status, TrialStatus::correctness);
}

// Issue 36: a configuration's static __local memory above the device's
// CL_DEVICE_LOCAL_MEM_SIZE is left to the launch on a GPU (NVIDIA's driver
// answers 48 KiB on the H100 and runs more); on PoCL's CPU, whose launch
// aborts the process, it is refused before the launch, naming both sizes.
TEST(TuningFile, LocalMemoryAboveTheDevicesIsLeftToAGpusLaunch) {
  DeviceInfo gpu;
  gpu.type = "gpu";
  gpu.local_mem_bytes = 49152;
  EXPECT_EQ(local_memory_refusal(gpu, 147460, false), "");
  EXPECT_EQ(local_memory_refusal(gpu, 147460, true),
            "the kernel needs 147460 bytes of local memory, the device has 49152");
  EXPECT_EQ(local_memory_refusal(gpu, 49152, true), "");
  DeviceInfo cpu = gpu;
  cpu.type = "cpu";
  EXPECT_EQ(local_memory_refusal(cpu, 147460, false),
            "the kernel needs 147460 bytes of local memory, the device has 49152");
  cpu.local_mem_bytes = 0;  // not reported: nothing to check against
  EXPECT_EQ(local_memory_refusal(cpu, 147460, true), "");

  Files f;
  f.write("pad.cl", R"CL(
__kernel void saxpy(const float a, const __global float* x, __global float* y, const int n) {
  __local float pad[PAD];
  const int i = get_global_id(0);
  pad[get_local_id(0)] = a;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) y[i] = pad[get_local_id(0)] * x[i] + y[i];
}
)CL");
  json j = saxpy_file();
  j["ConfigurationSpace"]["TuningParameters"] =
      json::parse(R"([{"Name": "PAD", "Type": "int", "Values": [16, 4194304]}])");
  j["ConfigurationSpace"]["Conditions"] = json::array();
  j["KernelSpecification"]["KernelFile"] = "pad.cl";
  j["KernelSpecification"]["GlobalSize"]["X"] = "ProblemSize[0]";
  const auto k = load_tuning_file(f.write("pad.json", j.dump(2)));
  EvaluatorConfig cfg;
  cfg.device = "cpu";
  InProcessEvaluator ev(*k, k->paper_size(), cfg);
  const Trial small = ev.evaluate(Configuration{json{{"PAD", 16}}, Extent{8, 1, 1}}, {0, 1});
  EXPECT_TRUE(small.ok()) << small.error;
  // 16 MiB of __local floats: above PoCL's CL_DEVICE_LOCAL_MEM_SIZE, refused before the launch.
  const Trial big = ev.evaluate(Configuration{json{{"PAD", 4194304}}, Extent{8, 1, 1}}, {0, 1});
  EXPECT_EQ(big.status, TrialStatus::constraints) << big.error;
  EXPECT_NE(big.error.find("bytes of local memory, the device has"), std::string::npos) << big.error;
}
