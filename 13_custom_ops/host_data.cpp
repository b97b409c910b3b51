// Chapter 13's inputs and float64 references (host_data.hpp), each over chunks of 2^20 elements
// on every core: a chunk's generator is seeded from its number, and the chunks' results are
// merged in chunk order, so nothing depends on the number of threads.
#include "13_custom_ops/host_data.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace ch13 {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

// f(begin, end) for every chunk of [0, n), in parallel; the results in chunk order.
template <class R, class F>
std::vector<R> per_chunk(std::size_t n, F f) {
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<R> results(chunks);
#pragma omp parallel for schedule(dynamic, 4) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c) results[c] = f(c * kChunk, std::min(n, (c + 1) * kChunk));
  return results;
}

std::mt19937_64 chunk_generator(std::uint64_t seed, std::size_t begin) {
  std::seed_seq s{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                  static_cast<std::uint32_t>(begin / kChunk)};
  return std::mt19937_64(s);
}

}  // namespace

bool is_float_dist(const std::string& d) {
  return d == "normal" || d == "uniform" || d == "shifted" || d == "near100" || d == "near_one" || d == "around_one";
}

std::vector<float> generate_floats(const std::string& dist, std::size_t n, std::uint64_t seed) {
  if (!is_float_dist(dist)) throw std::invalid_argument("unknown distribution '" + dist + "'");
  enum class Kind { normal, uniform, shifted, near100, near_one, around_one };
  const Kind kind = dist == "normal"     ? Kind::normal
                    : dist == "uniform"  ? Kind::uniform
                    : dist == "shifted"  ? Kind::shifted
                    : dist == "near100"  ? Kind::near100
                    : dist == "near_one" ? Kind::near_one
                                         : Kind::around_one;
  std::vector<float> x(n);
  per_chunk<char>(n, [&](std::size_t begin, std::size_t end) {
    std::mt19937_64 rng = chunk_generator(seed, begin);
    std::normal_distribution<float> normal(0, 1);
    std::uniform_real_distribution<float> unit(0, 1), near100(95, 105), around_one(0.5f, 2.0f);
    switch (kind) {  // a loop per kind: no test per element
      case Kind::normal:
        for (std::size_t i = begin; i < end; ++i) x[i] = normal(rng);
        break;
      case Kind::uniform:
        for (std::size_t i = begin; i < end; ++i) x[i] = unit(rng);
        break;
      case Kind::shifted:
        for (std::size_t i = begin; i < end; ++i) x[i] = 1e4f + normal(rng);
        break;
      case Kind::near100:
        for (std::size_t i = begin; i < end; ++i) x[i] = near100(rng);
        break;
      case Kind::near_one:
        for (std::size_t i = begin; i < end; ++i) x[i] = 1.0f + 1e-4f * normal(rng);
        break;
      case Kind::around_one:
        for (std::size_t i = begin; i < end; ++i) x[i] = i % 7 == 0 ? -around_one(rng) : around_one(rng);
        break;
    }
    return char{};
  });
  return x;
}

std::vector<float2> generate_pairs(std::size_t n, std::uint64_t seed) {
  std::vector<float2> x(n);
  per_chunk<char>(n, [&](std::size_t begin, std::size_t end) {
    std::mt19937_64 rng = chunk_generator(seed, begin);
    std::uniform_real_distribution<float> a(0.5f, 1.0f), b(-1.0f, 1.0f);
    for (std::size_t i = begin; i < end; ++i) {
      const float ai = a(rng);
      x[i] = float2{ai, b(rng)};
    }
    return char{};
  });
  return x;
}

std::vector<std::uint8_t> generate_bytes(bool all, const std::string& at, std::size_t n) {
  std::vector<std::uint8_t> x(n, all ? 1 : 0);
  if (n && at != "none") x[at == "start" ? 0 : at == "end" ? n - 1 : n / 2] = all ? 0 : 1;
  return x;
}

std::vector<float> generate_exact_factors(std::size_t n, std::uint64_t seed, double& product) {
  std::vector<float> x(n, 1.0f);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> where(0, n ? n - 1 : 0);
  const auto place = [&](float factor, std::size_t count) {
    for (std::size_t k = 0; k < count && k < n; ++k) {
      std::size_t i = where(rng);
      while (x[i] != 1.0f) i = (i + 1) % n;  // a free position (at most 107 are taken)
      x[i] = factor;
    }
  };
  const std::size_t few = std::min<std::size_t>(n / 2, 64);  // keeps room for the others when n is small
  place(2.0f, few);
  place(0.5f, few * 40 / 64);
  place(-1.0f, std::min<std::size_t>(n / 8, 3));
  product = 1;
  for (const float v : x) product *= v;  // powers of two: exact in double too
  return x;
}

std::size_t exact_squares_spacing(std::size_t n) {
  // At most kMost nonzero elements, each square at most 9: their total stays below 2^24. 4099 (odd,
  // off every power-of-two tile) up to n = 4099 kMost, about 7.6 x 10^9; then ceil(n / kMost),
  // made odd, which leaves ceil(n / spacing) <= kMost.
  constexpr std::size_t kMost = ((std::size_t{1} << 24) - 1) / 9;
  return std::max<std::size_t>(4099, ((n + kMost - 1) / kMost) | 1);
}

std::vector<float> generate_exact_squares(std::size_t n) {
  std::vector<float> x(n, 0.0f);
  const std::size_t spacing = exact_squares_spacing(n);
  for (std::size_t i = 0; i < n; i += spacing) x[i] = static_cast<float>(1 + i % 3);
  return x;
}

std::vector<float2> generate_unit_steps(std::size_t n, std::uint64_t seed) {
  std::vector<float2> x(n);
  per_chunk<char>(n, [&](std::size_t begin, std::size_t end) {
    std::mt19937_64 rng = chunk_generator(seed, begin);
    std::uniform_int_distribution<int> sign(0, 1), b(-1, 1);
    for (std::size_t i = begin; i < end; ++i) x[i] = float2{sign(rng) ? 1.0f : -1.0f, static_cast<float>(b(rng))};
    return char{};
  });
  return x;
}

ArgMinReference argmin_reference(const float* x, std::size_t n) {
  struct Part {
    ArgMinReference best;
    long long nan = -1;  // the chunk's first NaN
  };
  const auto parts = per_chunk<Part>(n, [&](std::size_t begin, std::size_t end) {
    Part p;
    for (std::size_t i = begin; i < end; ++i) {
      const double v = x[i];
      if (std::isnan(v)) {
        p.nan = static_cast<long long>(i);
        return p;
      }
      if (p.best.index < 0 || v < p.best.value) p.best = {v, static_cast<long long>(i)};
    }
    return p;
  });
  ArgMinReference r;
  for (const Part& p : parts) {
    if (p.nan >= 0) return {std::nan(""), p.nan};
    if (p.best.index >= 0 && (r.index < 0 || p.best.value < r.value)) r = p.best;
  }
  return r;
}

MinMaxReference minmax_reference(const float* x, std::size_t n) {
  struct Part {
    MinMaxReference r;
    bool nan = false;
  };
  const auto parts = per_chunk<Part>(n, [&](std::size_t begin, std::size_t end) {
    Part p;
    for (std::size_t i = begin; i < end; ++i) {
      const double v = x[i];
      if (std::isnan(v)) {
        p.nan = true;
        return p;
      }
      p.r.lo = std::min(p.r.lo, v);
      p.r.hi = std::max(p.r.hi, v);
    }
    return p;
  });
  MinMaxReference r;
  for (const Part& p : parts) {
    if (p.nan) return {std::nan(""), std::nan("")};
    r.lo = std::min(r.lo, p.r.lo);
    r.hi = std::max(r.hi, p.r.hi);
  }
  return r;
}

ProductReference product_reference(const float* x, std::size_t n) {
  struct Part {
    CompensatedSum logs, abs_logs;
    bool zero = false, inf = false, nan = false, negative = false;  // negative: an odd count of negative factors
  };
  const auto parts = per_chunk<Part>(n, [&](std::size_t begin, std::size_t end) {
    Part p;
    for (std::size_t i = begin; i < end; ++i) {
      const double v = x[i];
      if (std::isnan(v)) p.nan = true;
      if (v == 0) {
        p.zero = true;
        continue;
      }
      if (std::isinf(v)) p.inf = true;
      if (std::signbit(v)) p.negative = !p.negative;
      const double l = std::log(std::fabs(v));
      p.logs.add(l);
      p.abs_logs.add(std::fabs(l));
    }
    return p;
  });
  ProductReference r;
  CompensatedSum logs, abs_logs;
  bool zero = false, inf = false;
  for (const Part& p : parts) {
    logs.merge(p.logs);
    abs_logs.merge(p.abs_logs);
    zero |= p.zero;
    inf |= p.inf;
    r.nan |= p.nan;
    if (p.negative) r.sign = -r.sign;
  }
  r.log_abs = inf ? std::numeric_limits<double>::infinity() : logs.value();  // (a compensated sum of inf is NaN)
  r.abs_log_sum = abs_logs.value();
  if (zero && inf) r.nan = true;
  if (zero) {
    r.sign = 0;
    r.log_abs = -std::numeric_limits<double>::infinity();
  }
  return r;
}

double lse_reference(const float* x, std::size_t n) {
  struct Max {
    double m = -std::numeric_limits<double>::infinity();
    bool nan = false;
  };
  double m = -std::numeric_limits<double>::infinity();
  for (const Max& p : per_chunk<Max>(n, [&](std::size_t begin, std::size_t end) {
         Max p;
         for (std::size_t i = begin; i < end; ++i) {
           if (std::isnan(x[i])) p.nan = true;
           p.m = std::max(p.m, static_cast<double>(x[i]));
         }
         return p;
       })) {
    if (p.nan) return std::nan("");
    m = std::max(m, p.m);
  }
  if (std::isinf(m)) return m;
  CompensatedSum s;
  for (const CompensatedSum& p : per_chunk<CompensatedSum>(n, [&](std::size_t begin, std::size_t end) {
         CompensatedSum p;
         for (std::size_t i = begin; i < end; ++i) p.add(std::exp(static_cast<double>(x[i]) - m));
         return p;
       }))
    s.merge(p);
  return m + std::log(s.value());
}

MomentsReference moments_reference(const float* x, std::size_t n) {
  MomentsReference r;
  if (n == 0) return r;
  struct Sums {
    CompensatedSum s, a;
  };
  CompensatedSum s, a;
  for (const Sums& p : per_chunk<Sums>(n, [&](std::size_t begin, std::size_t end) {
         Sums p;
         for (std::size_t i = begin; i < end; ++i) {
           p.s.add(x[i]);
           p.a.add(std::fabs(static_cast<double>(x[i])));
         }
         return p;
       })) {
    s.merge(p.s);
    a.merge(p.a);
  }
  r.mean = s.value() / static_cast<double>(n);
  r.abs_sum = a.value();
  CompensatedSum m2;
  for (const CompensatedSum& p : per_chunk<CompensatedSum>(n, [&](std::size_t begin, std::size_t end) {
         CompensatedSum p;
         for (std::size_t i = begin; i < end; ++i) {
           const double d = static_cast<double>(x[i]) - r.mean;
           p.add(d * d);
         }
         return p;
       }))
    m2.merge(p);
  r.variance = m2.value() / static_cast<double>(n);
  r.kappa = m2.value() > 0 ? std::sqrt(1.0 + static_cast<double>(n) * r.mean * r.mean / m2.value())
                           : std::numeric_limits<double>::infinity();
  return r;
}

double sum_of_squares_reference(const float* x, std::size_t n) {
  CompensatedSum s;
  for (const CompensatedSum& p : per_chunk<CompensatedSum>(n, [&](std::size_t begin, std::size_t end) {
         CompensatedSum p;
         for (std::size_t i = begin; i < end; ++i) p.add(static_cast<double>(x[i]) * x[i]);
         return p;
       }))
    s.merge(p);
  return s.value();
}

BytesReference bytes_reference(const std::uint8_t* x, std::size_t n) {
  BytesReference r;
  for (const BytesReference& p : per_chunk<BytesReference>(n, [&](std::size_t begin, std::size_t end) {
         BytesReference p;
         for (std::size_t i = begin; i < end; ++i) p.any |= x[i] != 0, p.all &= x[i] != 0;
         return p;
       })) {
    r.any |= p.any;
    r.all &= p.all;
  }
  return r;
}

AffineReference affine_reference(const float2* x, std::size_t n) {
  AffineReference r;
  for (std::size_t i = 0; i < n; ++i) {
    r.a = x[i].x * r.a;
    r.b = x[i].x * r.b + x[i].y;
    r.abs_b = std::fabs(x[i].x) * r.abs_b + std::fabs(x[i].y);
  }
  return r;
}

}  // namespace ch13
