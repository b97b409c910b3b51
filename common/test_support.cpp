#include "test_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "device_info.hpp"

namespace red::test {

namespace {
struct ProgressLog {
  std::mutex mutex;
  std::string program = "test";
  std::string test_case;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last = start;

  void print(const std::string& what) {  // with `mutex` held
    last = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(last - start).count();
    std::printf("[%s %.1f s] %s%s%s\n", program.c_str(), seconds, test_case.c_str(), what.empty() ? "" : ": ",
                what.c_str());
    std::fflush(stdout);
  }
};
ProgressLog& progress_log() {
  static ProgressLog log;
  return log;
}
}  // namespace

void set_program_name(const char* argv0) {
  std::lock_guard<std::mutex> lock(progress_log().mutex);
  std::string name = argv0 ? argv0 : "test";
  progress_log().program = name.substr(name.find_last_of('/') + 1);
}

void test_case_started(const char* name) {
  ProgressLog& log = progress_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.test_case = name;
  log.print("");
}

void progress(const std::string& what, bool always) {
  ProgressLog& log = progress_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  if (always || std::chrono::steady_clock::now() - log.last >= std::chrono::seconds(2)) log.print(what);
}

std::vector<std::size_t> shared_sizes(std::initializer_list<std::size_t> tile_sizes) {
  std::vector<std::size_t> s = {1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 3'000'017};
  for (std::size_t tile : tile_sizes)
    for (std::size_t k : {tile - 1, tile, tile + 1, 2 * tile + 1})
      if (k > 0) s.push_back(k);
  return s;
}

std::size_t size_above_2_31(std::size_t bytes_per_element) {
  const std::size_t n = (std::size_t{1} << 31) + 7;
  DeviceInfo dev = query_device();
  // input + a copy of it in scratch (chapters 01-02) + headroom
  return 3 * n * bytes_per_element < dev.free_memory ? n : 0;
}

std::uint64_t fresh_seed() {
  static std::atomic<std::uint64_t> next{0x5EED0000};
  return next++;
}

Outcome run_checked(const Chapter& ch, Op op, const HostArray& input, std::size_t offset, const HostArray* second) {
  INFO(ch.name, " op=", std::string(name(op)), " dtype=", std::string(name(input.dtype)), " n=", input.n,
       " offset=", offset);
  REQUIRE((op == Op::dot) == (second != nullptr));
  progress(std::string(name(op)) + " " + std::string(name(input.dtype)) + " n=" + std::to_string(input.n),
           input.n >= (std::size_t{1} << 26));
  DeviceInput in = upload(input, offset);
  DeviceInput in2 = second ? upload(*second, offset) : DeviceInput{};
  Workspace ws(ch, op, input.dtype, input.n);
  ReduceCall call = make_call(op, input.dtype, in.data, input.n, ws, nullptr, in2.data);
  Outcome o;
  o.got = decode_result(run_once(ch, call, ws), input.dtype, op);
  o.ref = second ? reference_dot(input, *second) : reference(input, op);
  o.check = check_result(ch, o.ref, o.got, input.dtype, op, input.n);
  INFO("result=", o.got.value, " (int ", o.got.ivalue, ", index ", o.got.index, ") reference=", o.ref.value, " (int ",
       o.ref.ivalue, ", index ", o.ref.index, ") error=", o.check.abs_error, " bound=", o.check.bound, " ",
       o.check.why);
  CHECK(o.check.passed);
  // A chapter that keeps a counter in its zeroed scratch bytes left them zero for the next call.
  if (ws.zeroed > 0) CHECK(ws.zeroed_bytes_are_zero());
  // The contract says the input is never written.
  CHECK(device_holds(in, input));
  if (second) CHECK(device_holds(in2, *second));
  return o;
}

void check_sizes(const Chapter& ch, Op op, DType t, const std::vector<std::size_t>& sizes, Dist dist) {
  for (std::size_t n : sizes) {
    const HostArray a = generate(t, n, dist, fresh_seed());
    const HostArray b = op == Op::dot ? generate(t, n, dist, fresh_seed()) : HostArray{};
    Outcome o = run_checked(ch, op, a, 0, op == Op::dot ? &b : nullptr);
    // Small integers below 2^24 in magnitude add exactly in float, in any order: the bound
    // is not needed, and a lost or doubled element cannot hide inside it.
    if (dist == Dist::ints && op == Op::sum && n * 8 < (std::size_t{1} << 24)) CHECK(o.got.value == o.ref.value);
    // The same for products of such integers (at most 64 each).
    if (dist == Dist::ints && op == Op::dot && n * 64 < (std::size_t{1} << 24)) CHECK(o.got.value == o.ref.value);
  }
}

void check_support_matrix(const Chapter& ch, std::initializer_list<std::size_t> tile_sizes) {
  const std::vector<std::size_t> sizes = shared_sizes(tile_sizes);
  for (const OpDType& p : ch.support) {
    check_sizes(ch, p.op, p.dtype, sizes, Dist::normal);
    // Small integers: every float partial sum is exact, so a lost or doubled element shows.
    check_sizes(ch, p.op, p.dtype, {1000, 65'537, 1'000'003}, Dist::ints);
    check_sizes(ch, p.op, p.dtype, {4097, 1'000'003}, Dist::negative);
    check_sizes(ch, p.op, p.dtype, {4097, 1'000'003}, Dist::constant);
    check_sizes(ch, p.op, p.dtype, {4097, 1'000'003}, Dist::signs);
  }
}

namespace {
// Dot products: the empty input gives 0; a NaN in either vector gives NaN; inf times a positive
// number gives inf; inf times 0 gives NaN.
void check_dot_special_values(const Chapter& ch, DType t) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const HostArray empty(t, 0);
  Outcome o = run_checked(ch, Op::dot, empty, 0, &empty);
  CHECK(o.got.value == 0);
  const std::size_t n = 100'003;
  for (std::size_t pos : {std::size_t{0}, n / 2, n - 1})
    for (int which = 0; which < 2; ++which) {
      HostArray a = generate(t, n, Dist::normal, fresh_seed()), b = generate(t, n, Dist::normal, fresh_seed());
      (which ? b : a).set(pos, nan);
      CHECK(std::isnan(run_checked(ch, Op::dot, a, 0, &b).got.value));
    }
  HostArray a = generate(t, n, Dist::uniform, fresh_seed()), b = generate(t, n, Dist::uniform, fresh_seed());
  a.set(n / 3, inf);
  b.set(n / 3, 1.0);
  CHECK(run_checked(ch, Op::dot, a, 0, &b).got.value == inf);
  b.set(n / 3, 0.0);
  CHECK(std::isnan(run_checked(ch, Op::dot, a, 0, &b).got.value));
}
}  // namespace

void check_special_values(const Chapter& ch) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const OpDType& p : ch.support) {
    INFO(ch.name, " op=", std::string(name(p.op)), " dtype=", std::string(name(p.dtype)));
    if (p.op == Op::dot) {
      check_dot_special_values(ch, p.dtype);
      continue;
    }
    // Empty input: the identity (argmax: index -1).
    run_checked(ch, p.op, HostArray(p.dtype, 0));
    if (!is_floating(p.dtype)) continue;
    const std::size_t n = 100'003;
    for (std::size_t pos : {std::size_t{0}, n / 2, n - 1}) {
      HostArray a = generate(p.dtype, n, Dist::normal, fresh_seed());
      a.set(pos, nan);
      Outcome o = run_checked(ch, p.op, a);
      CHECK(std::isnan(o.got.value));  // sum, max, min propagate NaN; argmax picks it
      if (p.op == Op::argmax) CHECK(o.got.index == static_cast<std::int64_t>(pos));
    }
    HostArray a = generate(p.dtype, n, Dist::normal, fresh_seed());
    a.set(n / 3, inf);
    Outcome o = run_checked(ch, p.op, a);
    if (p.op == Op::sum || p.op == Op::max || p.op == Op::argmax) CHECK(o.got.value == inf);
    HostArray both = a;
    both.set(n / 5, -inf);
    o = run_checked(ch, p.op, both);
    if (p.op == Op::sum) CHECK(std::isnan(o.got.value));  // inf + -inf
    if (p.op == Op::min) CHECK(o.got.value == -inf);
    const HostArray all_neg_inf = filled(p.dtype, 5000, -inf);
    o = run_checked(ch, p.op, all_neg_inf);
    if (p.op == Op::max || p.op == Op::argmax) CHECK(o.got.value == -inf);
    if (p.op == Op::argmax) CHECK(o.got.index == 0);
  }
}

std::size_t distinct_results(const Chapter& ch, const ReduceCall& call, const Workspace& ws, int runs) {
  std::set<RawResult> distinct;
  for (int run = 0; run < runs; ++run) distinct.insert(run_once(ch, call, ws));
  return distinct.size();
}

RawResult run_on_garbage(const Chapter& ch, const ReduceCall& call, const Workspace& ws, std::mt19937_64& rng) {
  std::vector<std::uint64_t> junk(ws.scratch.bytes() / 8 + 1);
  for (auto& w : junk) w = rng();
  const std::size_t from = std::min(ws.zeroed, ws.scratch.bytes());
  ws.scratch.upload(reinterpret_cast<const char*>(junk.data()) + from, ws.scratch.bytes() - from, from);
  ws.output.fill(0xFF);
  return launch_and_read(ch, call, ws);
}

void check_concurrent_streams(const Chapter& ch, Op op, std::size_t n, int rounds, int streams) {
  INFO(ch.name, " concurrent streams, op=", std::string(name(op)), " n=", n);
  const HostArray host = generate(DType::f32, n, Dist::normal, fresh_seed());
  const DeviceInput in = upload(host);
  const Workspace alone(ch, op, DType::f32, n);
  const RawResult expected = run_once(ch, make_call(op, DType::f32, in.data, n, alone, nullptr), alone);
  CHECK(check_result(ch, reference(host, op), decode_result(expected, DType::f32, op), DType::f32, op, n).passed);
  std::vector<std::unique_ptr<Stream>> lanes;
  std::vector<std::unique_ptr<Workspace>> spaces;
  for (int s = 0; s < streams; ++s) {
    lanes.push_back(std::make_unique<Stream>());
    spaces.push_back(std::make_unique<Workspace>(ch, op, DType::f32, n));
  }
  int differ = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int s = 0; s < streams; ++s) {
      spaces[s]->poison_scratch(0xA5, lanes[s]->get());
      spaces[s]->output.fill(0xFF, lanes[s]->get());
      ch.launch(make_call(op, DType::f32, in.data, n, *spaces[s], lanes[s]->get()));
    }
    for (int s = 0; s < streams; ++s) {
      lanes[s]->sync();
      RawResult raw{};
      spaces[s]->output.download(raw.data(), raw.size());
      if (raw != expected) ++differ;
    }
  }
  CHECK(differ == 0);
  for (const auto& ws : spaces)
    if (ws->zeroed > 0) CHECK(ws->zeroed_bytes_are_zero());
}

void check_repeated_calls(const Chapter& ch, Op op, DType t, std::size_t n) {
  INFO(ch.name, " repeated calls, op=", std::string(name(op)), " n=", n);
  Workspace ws(ch, op, t, n);
  for (int rep = 0; rep < 10; ++rep) {
    // Alternate the sign so a stale partial from the previous call would be far off.
    HostArray host = generate(t, n, rep % 2 ? Dist::negative : Dist::uniform, fresh_seed());
    HostArray host2 = op == Op::dot ? generate(t, n, Dist::uniform, fresh_seed()) : HostArray{};
    DeviceInput in = upload(host);
    DeviceInput in2 = op == Op::dot ? upload(host2) : DeviceInput{};
    ReduceCall call = make_call(op, t, in.data, n, ws, nullptr, in2.data);
    // No poisoning between calls: the chapter must not depend on it.
    DeviceResult got = decode_result(launch_and_read(ch, call, ws), t, op);
    const Reference ref = op == Op::dot ? reference_dot(host, host2) : reference(host, op);
    CheckOutcome c = check_result(ch, ref, got, t, op, n);
    INFO("call ", rep, ": ", c.why, " error=", c.abs_error, " bound=", c.bound);
    CHECK(c.passed);
  }
}

void check_integer_overflow(const Chapter& ch) {
  for (std::size_t n : {std::size_t{5}, std::size_t{100'003}}) {
    if (ch.supports(Op::sum, DType::i32)) {
      const HostArray a = filled(DType::i32, n, 2147483647.0);  // INT32_MAX: the sum leaves i32 at once
      Outcome o = run_checked(ch, Op::sum, a);
      CHECK(o.got.ivalue == static_cast<std::int64_t>(n) * 2147483647);
    }
    if (ch.supports(Op::sum, DType::u8)) {
      const HostArray a = filled(DType::u8, n, 255.0);
      Outcome o = run_checked(ch, Op::sum, a);
      CHECK(o.got.ivalue == static_cast<std::int64_t>(n) * 255);
    }
    if (ch.supports(Op::sum, DType::i64)) {
      // n copies of 2^62 wrap modulo 2^64: 5 -> 2^62, 100003 -> 3 * 2^62 = -2^62 as a signed value.
      const HostArray a = filled(DType::i64, n, 4611686018427387904.0);
      Outcome o = run_checked(ch, Op::sum, a);
      const std::uint64_t wrapped = static_cast<std::uint64_t>(n) * (std::uint64_t{1} << 62);
      std::int64_t expected;
      std::memcpy(&expected, &wrapped, sizeof expected);
      CHECK(o.got.ivalue == expected);
    }
  }
}

void check_adversarial(const Chapter& ch) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const OpDType& p : ch.support) {
    INFO(ch.name, " adversarial, op=", std::string(name(p.op)), " dtype=", std::string(name(p.dtype)));
    const bool dot = p.op == Op::dot;
    auto run = [&](const HostArray& a) {
      const HostArray b = dot ? generate(p.dtype, a.n, Dist::uniform, fresh_seed()) : HostArray{};
      return run_checked(ch, p.op, a, 0, dot ? &b : nullptr);
    };
    const std::size_t n = 1'000'003;
    // All equal (argmax: every index ties, the first wins).
    const HostArray equal = filled(p.dtype, n, 3.0);
    Outcome o = run(equal);
    if (p.op == Op::argmax) CHECK(o.got.index == 0);
    if (!is_floating(p.dtype)) continue;
    // Heavy cancellation: +-big at both ends and in the middle, small values between. The float
    // bound scales with sum|x|, so the small values may be lost, but never more than that.
    const double big = p.dtype == DType::f16 ? 30000.0 : 1e30;
    HostArray cancel = generate(p.dtype, n, Dist::uniform, fresh_seed());
    cancel.set(0, big);
    cancel.set(n / 2, -big);
    cancel.set(n - 1, big);
    cancel.set(n / 3, -big);
    run(cancel);
    // Subnormals: the smallest normal value of the type times small factors.
    const double tiny = p.dtype == DType::f64 ? 1e-310 : p.dtype == DType::f16 ? 3e-6 : 1e-39;
    HostArray sub(p.dtype, n);
    for (std::size_t i = 0; i < n; ++i) sub.set(i, tiny * static_cast<double>(i % 7 + 1) * (i % 2 ? -1 : 1));
    o = run(sub);
    if (p.op == Op::max || p.op == Op::argmax) CHECK(o.got.value > 0);  // the largest is a positive subnormal
    // 16-bit data whose sum is far beyond f16's range: an f16 accumulator would overflow.
    if ((p.dtype == DType::f16 || p.dtype == DType::bf16) && p.op == Op::sum) {
      const HostArray many = filled(p.dtype, n, 1000.0);
      o = run(many);
      CHECK(o.got.value != inf);
      CHECK(o.got.value == doctest::Approx(1000.0 * static_cast<double>(n)).epsilon(1e-3));
    }
  }
  check_integer_overflow(ch);
}

void check_stress(const Chapter& ch, Op op, int count, int streams, std::size_t max_n) {
  INFO(ch.name, " stress, op=", std::string(name(op)));
  REQUIRE((op == Op::sum || op == Op::max));
  // One pool of small integers, uploaded once; sums of any sub-range are exact in float.
  const std::size_t pool_n = max_n + 4096;
  const HostArray pool = generate(DType::f32, pool_n, Dist::ints, fresh_seed());
  std::vector<std::int64_t> prefix(pool_n + 1, 0);  // exact sums of any range
  for (std::size_t i = 0; i < pool_n; ++i) prefix[i + 1] = prefix[i] + static_cast<std::int64_t>(pool.at(i));
  // The max of any range: whole chunks from a table of chunk maxima, the two partial chunks by a scan.
  constexpr std::size_t kChunk = 4096;
  std::vector<double> chunk_max((pool_n + kChunk - 1) / kChunk, -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < pool_n; ++i) chunk_max[i / kChunk] = std::max(chunk_max[i / kChunk], pool.at(i));
  auto range_max = [&](std::size_t lo, std::size_t hi) {  // [lo, hi)
    double m = -std::numeric_limits<double>::infinity();  // the identity, for an empty range
    while (lo < hi && lo % kChunk) m = std::max(m, pool.at(lo++));
    while (lo + kChunk <= hi) {
      m = std::max(m, chunk_max[lo / kChunk]);
      lo += kChunk;
    }
    while (lo < hi) m = std::max(m, pool.at(lo++));
    return m;
  };
  DeviceInput in = upload(pool);
  const auto* base = static_cast<const float*>(in.data);

  std::vector<std::unique_ptr<Stream>> lanes;
  std::vector<std::unique_ptr<Workspace>> spaces;
  for (int s = 0; s < streams; ++s) {
    lanes.push_back(std::make_unique<Stream>());
    spaces.push_back(std::make_unique<Workspace>(ch, op, DType::f32, max_n));
  }
  std::uint64_t state = fresh_seed() * 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {  // splitmix64
    state += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  // Pinned host memory for the results: a copy into pageable memory would wait for its kernel,
  // and the streams would no longer overlap.
  struct Pinned {
    RawResult* results = nullptr;
    explicit Pinned(int k) { CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&results), k * sizeof(RawResult))); }
    ~Pinned() { cudaFreeHost(results); }
  } pinned(streams);
  RawResult* raw = pinned.results;
  int wrong = 0;
  for (int done = 0; done < count; done += streams) {
    progress(std::string(name(op)) + ", " + std::to_string(done) + " of " + std::to_string(count) + " reductions");
    std::vector<std::size_t> first(streams), len(streams);
    for (int s = 0; s < streams; ++s) {
      len[s] = next() % (max_n + 1);
      first[s] = next() % (pool_n - len[s] + 1);
      ch.launch(make_call(op, DType::f32, base + first[s], len[s], *spaces[s], lanes[s]->get()));
      CUDA_CHECK(cudaMemcpyAsync(raw[s].data(), spaces[s]->output.get(), raw[s].size(), cudaMemcpyDeviceToHost,
                                 lanes[s]->get()));
    }
    for (int s = 0; s < streams; ++s) {
      lanes[s]->sync();
      const DeviceResult got = decode_result(raw[s], DType::f32, op);
      const double expected = op == Op::sum ? static_cast<double>(prefix[first[s] + len[s]] - prefix[first[s]])
                                            : range_max(first[s], first[s] + len[s]);
      if (got.value != expected && wrong++ < 5)
        MESSAGE("reduction ", done + s, ": n = ", len[s], " at element ", first[s], ": got ", got.value, ", expected ",
                expected);
    }
  }
  CHECK(wrong == 0);
}

void check_misaligned_starts(const Chapter& ch) {
  // f32 sum everywhere; where supported, dtypes with 2, 8 and 16 elements per 16-byte vector and
  // an argmax (its indices count from the caller's pointer, not from the aligned address).
  const OpDType cases[] = {{Op::sum, DType::f32},   {Op::argmax, DType::f32}, {Op::sum, DType::f64},
                           {Op::sum, DType::f16},   {Op::max, DType::bf16},   {Op::sum, DType::u8},
                           {Op::argmax, DType::u8}, {Op::dot, DType::f32},    {Op::dot, DType::bf16}};
  for (const OpDType& p : cases) {
    if (!ch.supports(p.op, p.dtype)) continue;
    for (std::size_t offset = 1; offset <= 7; ++offset)
      for (std::size_t n : {std::size_t{3}, std::size_t{37}, std::size_t{100'003}}) {  // 37 bytes: a head, a vector, a tail
        const HostArray a = generate(p.dtype, n, Dist::normal, fresh_seed());
        const HostArray b = p.op == Op::dot ? generate(p.dtype, n, Dist::normal, fresh_seed()) : HostArray{};
        run_checked(ch, p.op, a, offset, p.op == Op::dot ? &b : nullptr);
      }
  }
}

void check_alignment_independence(const Chapter& ch, std::size_t n) {
  // Float sums and dot products, where the order of additions shows in the bits; every dtype
  // width, so every position of a vector boundary inside the data occurs.
  const OpDType cases[] = {{Op::sum, DType::f32}, {Op::sum, DType::f64}, {Op::sum, DType::f16},
                           {Op::sum, DType::bf16}, {Op::sum, DType::u8}, {Op::dot, DType::f32},
                           {Op::dot, DType::bf16}};
  for (const OpDType& p : cases) {
    if (!ch.supports(p.op, p.dtype)) continue;
    const HostArray a = generate(p.dtype, n, Dist::normal, fresh_seed());
    const HostArray b = p.op == Op::dot ? generate(p.dtype, n, Dist::normal, fresh_seed()) : HostArray{};
    const Reference ref = p.op == Op::dot ? reference_dot(a, b) : reference(a, p.op);
    // Offsets 0 to one past a whole vector, in elements; a dot product's b also at its own offset.
    const std::size_t per_vector = 16 / size_of(p.dtype);
    std::optional<DeviceResult> first;
    for (std::size_t offset = 0; offset <= per_vector + 1; ++offset) {
      const std::size_t offset_b = p.op == Op::dot ? (offset * 3 + 1) % (per_vector + 2) : 0;
      INFO(ch.name, " ", std::string(name(p.op)), " ", std::string(name(p.dtype)), " n=", n, " offset=", offset,
           p.op == Op::dot ? " offset of b=" + std::to_string(offset_b) : std::string());
      DeviceInput in = upload(a, offset);
      DeviceInput in2 = p.op == Op::dot ? upload(b, offset_b) : DeviceInput{};
      Workspace ws(ch, p.op, p.dtype, n);
      const DeviceResult got =
          decode_result(run_once(ch, make_call(p.op, p.dtype, in.data, n, ws, nullptr, in2.data), ws), p.dtype, p.op);
      CHECK(check_result(ch, ref, got, p.dtype, p.op, n).passed);
      if (!first) first = got;
      INFO("result ", got.value, ", at offset 0 ", first->value);
      CHECK(std::memcmp(&got.value, &first->value, sizeof got.value) == 0);
      CHECK(got.ivalue == first->ivalue);
    }
  }
}

void check_above_2_31(const Chapter& ch) {
  std::size_t n = size_above_2_31(ch.supports(Op::dot, DType::f32) ? 2 * sizeof(float) : sizeof(float));
  if (n == 0) {
    MESSAGE("skipped: the device has too little free memory for 2^31 + 7 floats (and a copy)");
    return;
  }
  if (ch.supports(Op::dot, DType::f32)) {
    // A dot product of small integers with ones: every partial sum stays exact.
    const HostArray ones = filled(DType::f32, n, 1.0);
    const HostArray ints = generate(DType::f32, n, Dist::ints, fresh_seed());
    Outcome o = run_checked(ch, Op::dot, ints, 0, &ones);
    CHECK(o.got.value == o.ref.value);
    return;
  }
  // Small integers keep every partial sum exact, so a single lost element would show.
  Outcome o = run_checked(ch, Op::sum, generate(DType::f32, n, Dist::ints, fresh_seed()));
  CHECK(o.got.value == o.ref.value);
  run_checked(ch, Op::max, generate(DType::f32, n, Dist::uniform, fresh_seed()));
  if (ch.supports(Op::argmax, DType::f32)) {
    // The winner sits past index 2^31: a 32-bit index would wrap.
    HostArray a = generate(DType::f32, n, Dist::ints, fresh_seed());
    const std::size_t where = n - 3;
    a.set(where, 100.0);
    Outcome o = run_checked(ch, Op::argmax, a);
    CHECK(o.got.index == static_cast<std::int64_t>(where));
  }
}

}  // namespace red::test
