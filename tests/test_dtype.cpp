#include <doctest/doctest.h>

#include "dtype.hpp"

using namespace red;

TEST_CASE("dtype and op names round-trip, unknown names are refused") {
  for (DType t : kAllDTypes) CHECK(parse_dtype(name(t)) == t);
  for (Op op : kAllOps) CHECK(parse_op(name(op)) == op);
  CHECK_FALSE(parse_dtype("f8").has_value());
  CHECK_FALSE(parse_dtype("F32").has_value());
  CHECK_FALSE(parse_op("prod").has_value());
}

TEST_CASE("element sizes") {
  CHECK(size_of(DType::f16) == 2);
  CHECK(size_of(DType::bf16) == 2);
  CHECK(size_of(DType::f32) == 4);
  CHECK(size_of(DType::f64) == 8);
  CHECK(size_of(DType::u8) == 1);
  CHECK(size_of(DType::i32) == 4);
  CHECK(size_of(DType::i64) == 8);
}

TEST_CASE("result types: 16-bit float sums return f32, integer sums i64, extremes the input type") {
  CHECK(result_dtype(DType::f16, Op::sum) == DType::f32);
  CHECK(result_dtype(DType::bf16, Op::sum) == DType::f32);
  CHECK(result_dtype(DType::f64, Op::sum) == DType::f64);
  CHECK(result_dtype(DType::u8, Op::sum) == DType::i64);
  CHECK(result_dtype(DType::i32, Op::sum) == DType::i64);
  CHECK(result_dtype(DType::f16, Op::max) == DType::f16);
  CHECK(result_dtype(DType::i32, Op::argmax) == DType::i32);
  CHECK(result_dtype(DType::bf16, Op::dot) == DType::f32);
}

TEST_CASE("all_of lists every pair") {
  Support s = all_of({Op::sum, Op::max}, {DType::f32, DType::i32});
  CHECK(s.size() == 4);
  CHECK(s[3] == OpDType{Op::max, DType::i32});
}
