// Chapter 13's operators over 1 GiB of input (2^28 floats; 2^30 bytes for any/all; 2^27 (a, b)
// pairs for the affine maps), each through the lesson's kernel, the order-keeping kernel where the
// reordering one is the lesson's, and CUB's TransformReduce with the same functors, in the same
// run. The naive forms run on the data that shows their trap (products of values around one,
// log-sum-exp near 100, variance of 10^4 + N(0, 1)). Every call is checked against float64 before
// it is timed; a lesson's failing check fails its row, a trap's is reported in the counters:
// error and error_bound (bench.csv's columns; a bound of -1: none below 10^-4 at this n, the
// product's verdict "unbounded: not checked", checks.hpp), passed (1 pass, 0 fail, -1 not
// checked: unbounded, its exact-data gate passed and the result not lost), and where the check is
// of one number, the result and its float64 value. The early exit's rows with a deciding byte carry no GB/s: their reads are
// counted by scripts/early_exit_bytes.sh.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "13_custom_ops/baselines.cuh"
#include "13_custom_ops/host_reference.hpp"
#include "13_custom_ops/user_op.cuh"
#include "device_buffer.hpp"
#include "suite.hpp"

namespace red::bench::suite {

namespace {

using namespace ch13;

constexpr std::size_t kBytes = std::size_t{1} << 30;  // every input: 1 GiB

// The input of one data set, on the host and the device, shared by the cases that follow each other.
template <class In>
struct Data {
  std::string name;
  std::vector<In> host;
  DeviceBuffer device;
};
template <class In>
std::shared_ptr<Data<In>> data_named(const std::string& name) {
  static std::shared_ptr<Data<In>> last;
  if (last && last->name == name) return last;
  last.reset();
  auto d = std::make_shared<Data<In>>();
  d->name = name;
  const std::size_t n = kBytes / sizeof(In);
  const std::uint64_t seed = 0xC0575 + n;
  if constexpr (std::is_same_v<In, std::uint8_t>)  // "all_none": all ones; "any_middle": zeros with a 1 at the middle
    d->host = generate_bytes(name.rfind("all", 0) == 0, name.substr(name.find('_') + 1), n);
  else if constexpr (std::is_same_v<In, float2>)
    d->host = generate_pairs(n, seed);
  else
    d->host = generate_floats(name, n, seed);
  d->device = DeviceBuffer(n * sizeof(In));
  d->device.upload(d->host.data(), n * sizeof(In));
  last = d;
  return last;
}

struct Resources {
  std::shared_ptr<void> data;
  DeviceBuffer output, scratch;
};

// One row: Op through kernel k (or CUB) on data set `data`, `trap` when its check may fail.
// Policy: the reordering kernel's, where it is not the operator's own (TuningOf): a variant.
template <class Op, class Policy = TuningOf<Op>>
void register_op(const std::string& op, const std::string& data, Kernel k, const std::string& kernel_label,
                 const std::string& variant_of, bool cub = false, bool trap = false, double true_at = -1,
                 double in_range = -1) {
  using In = typename Op::In;
  const std::string dtype = std::is_same_v<In, std::uint8_t> ? "u8" : std::is_same_v<In, float2> ? "f32x2" : "f32";
  const std::size_t n = kBytes / sizeof(In);
  const std::string label = "13_custom_ops/" + kernel_label + "/" + op + "/" + dtype + "/" + std::to_string(n);
  register_timed(label, static_cast<double>(kBytes), [=](cudaStream_t stream) {
    auto r = std::make_shared<Resources>();
    const auto d = data_named<In>(data);
    r->data = d;
    const In* in = static_cast<const In*>(d->device.get());
    r->output = DeviceBuffer(64);
    TimedCase tc;
    if (cub) {
      std::size_t bytes = 0;
      CUDA_CHECK(cub_transform_reduce<Op>(nullptr, bytes, in, n, nullptr, stream));
      r->scratch = DeviceBuffer(bytes + 16);
      auto* out = static_cast<typename Op::Acc*>(r->output.get());
      void* temp = r->scratch.get();
      tc.call = [=] {
        std::size_t b = bytes;
        CUDA_CHECK(cub_transform_reduce<Op>(temp, b, in, n, out, stream));
      };
    } else {
      constexpr bool kOwnPolicy = std::is_same_v<Policy, TuningOf<Op>>;
      r->scratch = DeviceBuffer(kOwnPolicy ? scratch_for<Op>(k, n) : scratch_bytes<Op, Policy>(n));
      r->scratch.zero_prefix(kOwnPolicy ? zeroed_for<Op>(k) : zeroed_scratch_bytes<Op, Policy>());
      Call c;
      c.input = in;
      c.n = n;
      c.output = r->output.get();
      c.scratch = r->scratch.get();
      c.scratch_bytes = r->scratch.bytes();
      c.stream = stream;
      if constexpr (kOwnPolicy)
        tc.call = [=] { launch_with<Op>(k, c); };
      else
        tc.call = [=] { launch_reordering_anyway<Op, Policy>(c); };
      tc.call();
      CUDA_CHECK(cudaStreamSynchronize(stream));
      RawResult raw{};
      r->output.download(raw.data(), raw.size());
      const Verdict v = verdict_of<Op>(k, d->host.data(), n, raw);  // (a variant's depth is close: its bound)
      // No useful bound at this n (a product's, checks.hpp): the exact-data gate of the same n still
      // catches a lost or repeated element, but the result itself goes unchecked.
      GateOutcome gate;
      if constexpr (ExactGate<Op>::kExists)
        if (!v.bounded) gate = ExactGate<Op>::run(k, n, 1);
      const bool failed = v.lost || (gate.ran && !gate.passed) || (v.bounded && !v.passed);
      const bool not_checked = !failed && !v.bounded;
      if (failed && !trap) tc.wrong = gate.ran && !gate.passed ? gate.why : v.why;
      // (An unbounded row is timed and reported as not checked: nothing was found wrong.)
      // JSON has no inf or NaN: a result that is not finite where the answer is reads 1e300
      // (tools/readme_custom_ops.py);
      // a bound of -1 says none is below 10^-4 at this n (the verdict unbounded: not checked, or,
      // with passed 0, a lost result or a failed exact-data gate).
      tc.counters["error"] = std::isfinite(v.error) ? v.error : 1e300;
      tc.counters["error_bound"] = !v.bounded ? -1 : std::isfinite(v.bound) ? v.bound : 1e300;
      tc.counters["passed"] = failed ? 0 : not_checked ? -1 : 1;
      // The number the error is taken of and its float64 value, where the check is of one number
      // (a product past float's range: inf beside its true value); +-1e300 stands for +-inf.
      const auto finite = [](double x) { return std::isfinite(x) ? x : std::copysign(1e300, x); };
      if (!std::isnan(v.got)) tc.counters["result"] = finite(v.got);
      if (!std::isnan(v.want)) tc.counters["true_value"] = finite(v.want);
    }
    tc.elements = static_cast<double>(n);
    tc.bytes = static_cast<double>(kBytes);
    // The early exit with a deciding byte stops before the end: how far it read, the timing does
    // not know (scripts/early_exit_bytes.sh counts it with Nsight Compute).
    tc.reads_known = !(k == Kernel::votes_early_exit && true_at < 2);
    tc.variant_of = variant_of;
    if (true_at >= 0) tc.counters["param_true_at"] = true_at;  // 0 start, 1 middle, 2 nowhere
    if (in_range >= 0) tc.counters["param_in_range"] = in_range;  // 1: a product that stays in float's range
    tc.keep = r;
    return tc;
  });
}

// The lesson's kernel, the order-keeping one as its variant, and CUB.
template <class Op>
void register_commutative(const std::string& op, const std::string& data, bool trap = false) {
  register_op<Op>(op, data, Kernel::reordering, "reduce", "", false, trap);
  register_op<Op>(op, data, Kernel::ordered, "reduce_ordered", "reduce", false, trap);
  register_op<Op>(op, data, Kernel::reordering, "cub_transform_reduce", "", true);
}

}  // namespace

void register_custom_ops() {
  register_commutative<ArgMin<float>>("argmin", "normal");
  register_commutative<MinMax<float>>("minmax", "normal");
  register_commutative<user_functors::SumOfSquares>("sum_of_squares", "normal");
  // Products: of values around one (the product leaves float's range: the plain one fails), and of
  // 1 + N(0, 10^-4) (it stays in range, ln|p| about -n 10^-8 / 2). At 2^28 factors the float
  // product's bound and the sum of logs' are far above 10^-4: their rows report "unbounded: not
  // checked" or a lost answer, as a trap's row does. The mantissa/exponent product, its mantissa a
  // double, is checked on both and must pass.
  register_commutative<Product<float>>("product", "around_one", true);
  register_commutative<LogProduct<float>>("log_product", "around_one");
  register_commutative<ScaledProduct<float>>("scaled_product", "around_one");
  for (const char* op : {"product", "log_product", "scaled_product"}) {
    const std::string name = op;
    const auto in_range = [&](auto* tag) {
      using Op = std::remove_pointer_t<decltype(tag)>;
      register_op<Op>(name, "near_one", Kernel::reordering, "reduce", "", false, name != "scaled_product", -1, 1);
    };
    if (name == "product") in_range(static_cast<Product<float>*>(nullptr));
    if (name == "log_product") in_range(static_cast<LogProduct<float>*>(nullptr));
    if (name == "scaled_product") in_range(static_cast<ScaledProduct<float>*>(nullptr));
  }
  // The two products with chapter 10's 32 elements a trip, against the 16 they take.
  register_op<LogProduct<float>, ch07::Tuning>("log_product", "around_one", Kernel::reordering, "reduce_32_elements", "reduce");
  register_op<ScaledProduct<float>, ch07::Tuning>("scaled_product", "around_one", Kernel::reordering, "reduce_32_elements",
                                                  "reduce");
  register_commutative<NaiveLogSumExp<float>>("lse_naive", "near100", true);
  register_commutative<LogSumExp<float>>("lse", "near100");
  register_commutative<NaiveMeanVariance<float>>("mean_variance_naive", "shifted", true);
  register_commutative<MeanVariance<float>>("mean_variance", "shifted");
  // Affine maps: the order-keeping kernel is the lesson; CUB does not support non-commutative operators.
  register_op<ComposeAffine>("affine", "pairs", Kernel::ordered, "reduce_ordered", "");
  // any / all: the vote kernel, its early exit where the deciding byte is at the start, the
  // middle or nowhere, the generic kernel, and CUB.
  for (const char* op : {"any", "all"}) {
    const bool all = std::string(op) == "all";
    const auto with = [&](auto* tag) {
      using Op = std::remove_pointer_t<decltype(tag)>;
      const std::string none = std::string(op) + "_none";
      register_op<Op>(op, none, Kernel::votes, "reduce", "", false, false, 2);
      register_op<Op>(op, none, Kernel::reordering, "reduce_generic", "reduce", false, false, 2);
      register_op<Op>(op, none, Kernel::reordering, "cub_transform_reduce", "", true, false, 2);
      int at = 0;
      for (const char* where : {"start", "middle", "none"})
        register_op<Op>(op, std::string(op) + "_" + where, Kernel::votes_early_exit, "reduce_early_exit", "reduce", false,
                        false, at++);
    };
    if (all)
      with(static_cast<AllNonzero*>(nullptr));
    else
      with(static_cast<AnyNonzero*>(nullptr));
  }
}

}  // namespace red::bench::suite
