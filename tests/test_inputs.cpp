#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "inputs.hpp"

using namespace red;

TEST_CASE("generators are reproducible for a seed and differ between seeds") {
  for (DType t : kAllDTypes)
    for (Dist d : kAllDists) {
      HostArray a = generate(t, 70'000, d, 42), b = generate(t, 70'000, d, 42);
      CHECK(a.bytes == b.bytes);
      if (d != Dist::constant) CHECK(generate(t, 70'000, d, 43).bytes != a.bytes);
    }
}

TEST_CASE("generators produce what their names promise") {
  HostArray u = generate(DType::f32, 100'000, Dist::uniform, 1);
  double mean = 0;
  for (std::size_t i = 0; i < u.n; ++i) {
    REQUIRE(u.at(i) >= 0.0);
    REQUIRE(u.at(i) < 1.0);
    mean += u.at(i) / static_cast<double>(u.n);
  }
  CHECK(mean == doctest::Approx(0.5).epsilon(0.01));

  HostArray g = generate(DType::f64, 200'000, Dist::normal, 2);
  double m = 0, m2 = 0;
  for (std::size_t i = 0; i < g.n; ++i) m += g.at(i), m2 += g.at(i) * g.at(i);
  m /= static_cast<double>(g.n);
  m2 /= static_cast<double>(g.n);
  CHECK(std::fabs(m) < 0.01);
  CHECK(std::sqrt(m2 - m * m) == doctest::Approx(1.0).epsilon(0.01));

  HostArray k = generate(DType::f32, 10'000, Dist::ints, 3);
  for (std::size_t i = 0; i < k.n; ++i) {
    REQUIRE(k.at(i) == std::round(k.at(i)));
    REQUIRE(std::fabs(k.at(i)) <= 8.0);
  }
  HostArray neg = generate(DType::i32, 10'000, Dist::negative, 4);
  for (std::size_t i = 0; i < neg.n; ++i) REQUIRE(neg.at_int(i) < 0);
  HostArray c = generate(DType::bf16, 1000, Dist::constant, 5);
  for (std::size_t i = 0; i < c.n; ++i) REQUIRE(c.at(i) == 1.0);
}

TEST_CASE("set and at convert through every dtype") {
  HostArray h(DType::f16, 3);
  h.set(0, 1.5);
  h.set(1, 65504.0);
  h.set(2, 1e6);  // beyond f16: rounds to inf
  CHECK(h.at(0) == 1.5);
  CHECK(h.at(1) == 65504.0);
  CHECK(std::isinf(h.at(2)));
  HostArray b(DType::bf16, 1);
  b.set(0, 3.0e38);
  CHECK(b.at(0) == doctest::Approx(3.0e38).epsilon(0.01));
  HostArray i(DType::i64, 1);
  i.set(0, -5);
  CHECK(i.at_int(0) == -5);
}

namespace {
std::string temp_file(const std::string& name, const void* data, std::size_t bytes) {
  std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary).write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  return path;
}
}  // namespace

TEST_CASE("the raw file loader reads little-endian arrays and refuses bad files") {
  const float values[5] = {1.0f, -2.5f, 3.25f, 0.0f, 1e30f};
  std::string path = temp_file("red_loader_ok.bin", values, sizeof values);
  HostArray a = load_raw(path, DType::f32);
  REQUIRE(a.n == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(a.at(i) == values[i]);
  CHECK(load_raw(path, DType::f32, 3).n == 3);
  CHECK(raw_element_count(path, DType::f16) == 10);
  CHECK(raw_element_count(path, DType::u8) == 20);

  std::string odd = temp_file("red_loader_odd.bin", values, 7);
  CHECK_THROWS_WITH_AS(load_raw(odd, DType::f32), doctest::Contains("not a multiple"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_raw("/nonexistent/red.bin", DType::f32), doctest::Contains("does not exist"),
                       std::invalid_argument);
  std::filesystem::remove(path);
  std::filesystem::remove(odd);
}

TEST_CASE("exact_sum_input: few small positive integers, so every order of additions is exact") {
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 3}) {
    const HostArray a = exact_sum_input(DType::f32, n, 5);
    std::size_t nonzeros = 0;
    double total = 0;
    bool small_integers = true;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = a.at(i);
      if (v == 0) continue;
      ++nonzeros;
      total += v;
      small_integers = small_integers && v >= 1 && v <= 8 && v == std::floor(v);
    }
    CHECK(small_integers);
    CHECK(nonzeros >= 1);
    CHECK(nonzeros <= kExactNonzeros);
    CHECK(total <= 8.0 * static_cast<double>(kExactNonzeros));  // below 2^24: exact in float
  }
  // Different seeds put the nonzeros elsewhere.
  CHECK(exact_sum_input(DType::f32, 1 << 20, 1).bytes != exact_sum_input(DType::f32, 1 << 20, 2).bytes);
}

TEST_CASE("output files: a missing folder or a folder's name is refused before any work; write_raw writes the bytes") {
  const std::string folder = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH_AS(check_writable("/nonexistent-folder/out.bin"), doctest::Contains("does not exist"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_writable(folder), doctest::Contains("is a folder"), std::invalid_argument);
  const std::string path = folder + "/red_output_test.bin";
  CHECK_NOTHROW(check_writable(path));
  const float values[] = {1.5f, -2.0f, 3.25f};
  write_raw(path, values, sizeof values);
  CHECK(raw_count(path, sizeof(float)) == 3);
  CHECK(load_raw(path, DType::f32).at(2) == 3.25);
  CHECK_THROWS_WITH_AS(raw_count(path, 8), doctest::Contains("not a multiple"), std::invalid_argument);
  std::filesystem::remove(path);
}
