// The isolated evaluator on real OpenCL (PoCL): a hanging kernel times out
// and a crashing one is a runtime failure, without taking the tuner down;
// a real kernel is tuned and verified. This executable never calls OpenCL
// in its own process (the workers are forked before any OpenCL call).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "evaluate/trial.hpp"
#include "search/search.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {

// Test-only descriptor of kernels/hang.cl: one work-item per element; it
// never finishes when the local size is `hang_x`, and the worker crashes
// (SIGABRT, as a failing driver assertion would) when the local size is `crash_x`.
class HangSpec final : public KernelSpec {
 public:
  std::size_t hang_x = 2, crash_x = 8;
  std::string_view name() const override { return "hang"; }
  std::string_view description() const override { return "test kernel that hangs"; }
  std::string_view size_syntax() const override { return "N"; }
  std::string_view entry_point() const override { return "hang"; }
  unsigned dims() const override { return 1; }
  Priority priority() const override { return Priority::none; }
  Problem parse_size(std::string_view text) const override {
    return Problem{"hang", {std::stoul(std::string(text))}, std::string(text)};
  }
  Problem paper_size() const override { return parse_size("16"); }
  unsigned paper_repetitions() const override { return 1; }
  std::size_t split_units(const Problem& p, unsigned) const override { return p.n[0]; }
  Extent block_global(const Problem&, const Block& b) const override { return Extent{b.size(), 1, 1}; }
  double ops_per_work_item(const Problem&) const override { return 1; }
  std::vector<HostBuffer> generate_inputs(const Problem&, std::uint64_t) const override { return {}; }
  std::vector<HostBuffer> reference(const Problem& p, const std::vector<HostBuffer>&) const override {
    return {HostBuffer::floats(p.n[0])};
  }
  Verdict verify(const Problem&, const std::vector<HostBuffer>& out,
                 const std::vector<HostBuffer>& ref) const override {
    return Verdict{out.at(0).size() == ref.at(0).size(), 0, 0, "size"};
  }
  std::vector<HostBuffer> block_inputs(const Problem&, const std::vector<HostBuffer>&, const Block&) const override {
    return {};
  }
  std::vector<OutputBuffer> outputs(const Problem&, const Block& b) const override {
    return {OutputBuffer{kFloat32, b.size(), b.size(), std::nullopt, false}};
  }
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override { return {HostBuffer::floats(p.n[0])}; }
  void place_block(const Problem&, const Block&, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    full = bo;
  }
  std::vector<cl::Event> enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem& p, const Block& b,
                                 const std::vector<cl::Buffer>& in, const std::vector<cl::Buffer>& out,
                                 const LocalSize& local, const Extent&) const override {
    if (local && local->x == crash_x) std::abort();
    set_args(kernel, p, b, in, out, local);
    kernel.setArg(1, cl_uint{local && local->x == hang_x ? 1u : 0u});
    cl::Event ev;
    queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(b.size()),
                               local ? cl::NDRange(local->x) : cl::NullRange, nullptr, &ev);
    return {ev};
  }

 protected:
  void set_args(cl::Kernel& kernel, const Problem&, const Block&, const std::vector<cl::Buffer>&,
                const std::vector<cl::Buffer>& out, const LocalSize&) const override {
    kernel.setArg(0, out.at(0));
    kernel.setArg(1, cl_uint{0});
  }
};

// A configuration of a kernel without tuning parameters: its local size.
Configuration local(LocalSize l) {
  return Configuration{nlohmann::json::object(), l};
}

EvaluatorConfig config(int timeout_ms) {
  EvaluatorConfig c;
  c.device = "cpu";
  c.trial_timeout = std::chrono::milliseconds(timeout_ms);
  return c;
}

// A tune over isolated trials answers with the fastest configuration that
// ran correctly, by the medians its trials hold (tie-break samples merged):
// a timed-out, crashed or failed trial, or a slower one, is never the best.
void expect_best_is_fastest_measured(const TuneResult& r) {
  const Trial* fastest = nullptr;
  for (const auto& t : r.trials)
    if (t.ok() && t.kernel.size() && (!fastest || t.median_ms() < fastest->median_ms())) fastest = &t;
  ASSERT_NE(fastest, nullptr) << "no configuration ran correctly";
  EXPECT_TRUE(r.best.ok()) << r.best.error;
  EXPECT_DOUBLE_EQ(r.best.median_ms(), fastest->median_ms())
      << "best " << to_string(r.best.local) << ", fastest " << to_string(fastest->local);
}

}  // namespace

TEST(IsolatedEvaluator, HangingKernelTimesOutAndTheTunerCarriesOn) {
  HangSpec spec;
  const Problem p = spec.parse_size("16");
  IsolatedEvaluator ev(spec, p, config(4000));
  EXPECT_EQ(ev.target().global, (Extent{16, 1, 1}));
  const auto t0 = std::chrono::steady_clock::now();
  const Trial hang = ev.evaluate(local(Extent{2, 1, 1}), TimingOptions{0, 1});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(hang.status, TrialStatus::timeout) << hang.error;
  EXPECT_GE(s, 3.9);
  EXPECT_LT(s, 30.0);
  const Trial ok = ev.evaluate(local(Extent{4, 1, 1}), TimingOptions{0, 2});  // on a fresh worker
  EXPECT_TRUE(ok.ok()) << ok.error;
  EXPECT_TRUE(ok.verified);
  EXPECT_EQ(ok.kernel.size(), 2u);
  EXPECT_EQ(ev.workers_started(), 2u);
}

TEST(IsolatedEvaluator, CrashingWorkerIsARuntimeFailure) {
  HangSpec spec;
  IsolatedEvaluator ev(spec, spec.parse_size("16"), config(20000));
  const Trial crash = ev.evaluate(local(Extent{8, 1, 1}), TimingOptions{0, 1});
  EXPECT_EQ(crash.status, TrialStatus::runtime);
  EXPECT_NE(crash.error.find("signal"), std::string::npos) << crash.error;
  const Trial ok = ev.evaluate(local(std::nullopt), TimingOptions{0, 1});
  EXPECT_TRUE(ok.ok()) << ok.error;
}

TEST(IsolatedEvaluator, TuneOverAHangingConfigurationFinishes) {
  HangSpec spec;
  spec.crash_x = 0;
  IsolatedEvaluator ev(spec, spec.parse_size("16"), config(4000));
  auto s = make_exhaustive_searcher();
  TuneOptions o;
  o.timing = {0, 2};
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  ASSERT_EQ(r.space_size, 5u);  // 1, 2, 4, 8, 16
  EXPECT_EQ(r.evaluations, 6u);
  unsigned timeouts = 0;
  for (const auto& t : r.trials) timeouts += t.status == TrialStatus::timeout;
  EXPECT_EQ(timeouts, 1u);
  EXPECT_TRUE(r.best.ok());
  EXPECT_NE(to_string(r.best.local), "2");
  expect_best_is_fastest_measured(r);
}

TEST(IsolatedEvaluator, TunesAndVerifiesMatmul) {
  const KernelSpec& spec = kernel_spec("matmul");
  IsolatedEvaluator ev(spec, spec.parse_size("48"), config(60000));
  EXPECT_GT(ev.target().limits.max_items(), 1u);
  const Trial bad = ev.evaluate(local(Extent{128, 64, 2}), TimingOptions{0, 1});  // above the work-group limit
  EXPECT_EQ(bad.status, TrialStatus::constraints);
  // matmul guards its bounds: a local size that does not divide 48 runs on
  // an NDRange rounded up to 50x48, and the result verifies.
  const Trial padded = ev.evaluate(local(Extent{5, 1, 2}), TimingOptions{0, 1});
  ASSERT_TRUE(padded.ok()) << padded.error;
  EXPECT_TRUE(padded.verified);
  ASSERT_TRUE(padded.global);
  EXPECT_EQ(*padded.global, (Extent{50, 48, 2}));
  // The noise criterion reaches the worker: a median error no real spread
  // meets takes samples up to the cap; without it the minimum count stays.
  const Trial capped = ev.evaluate(local(Extent{8, 8, 2}), TimingOptions{0, 3, 0, 9, 1e-12});
  ASSERT_TRUE(capped.ok()) << capped.error;
  // More than the 3 repetitions (all 9 unless the timer repeats values so
  // exactly that the interquartile range is 0), never past the cap.
  EXPECT_GT(capped.kernel.size(), 3u);
  EXPECT_LE(capped.kernel.size(), 9u);
  EXPECT_EQ(ev.evaluate(local(Extent{8, 8, 2}), TimingOptions{0, 3, 0, 9}).kernel.size(), 3u);
  auto s = make_guided_searcher(1);
  TuneOptions o;
  o.timing = {1, 3};
  unsigned seen = 0;
  o.on_trial = [&](const Trial&, TrialPhase) { ++seen; };
  const TuneResult r = tune(ev, *s, *max_evaluations(8), o);
  EXPECT_EQ(r.evaluations, 8u);
  EXPECT_EQ(seen, r.evaluations + r.tiebreak_trials);
  for (const auto& t : r.trials) EXPECT_TRUE(t.ok()) << to_string(t.local) << ": " << t.error;
  EXPECT_TRUE(r.rule.has_value());
  expect_best_is_fastest_measured(r);
}

TEST(IsolatedEvaluator, BadDeviceSelectorIsAUsageError) {
  const KernelSpec& spec = kernel_spec("trapezoid");
  EvaluatorConfig c = config(10000);
  c.device = "no-such-device-xyz";
  EXPECT_THROW(IsolatedEvaluator(spec, spec.parse_size("64"), c), UsageError);
}
