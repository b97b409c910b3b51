#include "dtype.hpp"

namespace red {

std::string_view name(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::u8:
      return "u8";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
  }
  return "?";
}

std::string_view name(Op op) {
  switch (op) {
    case Op::sum:
      return "sum";
    case Op::max:
      return "max";
    case Op::min:
      return "min";
    case Op::argmax:
      return "argmax";
    case Op::dot:
      return "dot";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (name(t) == s) return t;
  return std::nullopt;
}

std::optional<Op> parse_op(std::string_view s) {
  for (Op op : kAllOps)
    if (name(op) == s) return op;
  return std::nullopt;
}

std::size_t size_of(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::f64:
    case DType::i64:
      return 8;
    case DType::u8:
      return 1;
  }
  return 0;
}

bool is_floating(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }

DType result_dtype(DType input, Op op) {
  if (op != Op::sum && op != Op::dot) return input;
  if (input == DType::f64) return DType::f64;
  return is_floating(input) ? DType::f32 : DType::i64;
}

Support all_of(std::initializer_list<Op> ops, std::initializer_list<DType> dtypes) {
  Support s;
  for (Op op : ops)
    for (DType t : dtypes) s.push_back({op, t});
  return s;
}

}  // namespace red
