// The programs' --json output: one JSON object on one line, written with nlohmann-json, the same
// rules in every chapter program.
//
//  - Numbers are JSON numbers at full precision: nlohmann-json writes the shortest text that reads
//    back as the same double (1.23e-07, not 0.000000).
//  - JSON has no number for NaN or an infinity. Such a value is written as the string "nan", "inf"
//    or "-inf", never as a bare token (NaN, inf: not JSON) and never as null (which would hide
//    which one it was). A reader that wants a number back maps those three strings.
//  - Results are numbers (or objects of numbers, for a structured result), not text.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

namespace red {

using Json = nlohmann::ordered_json;  // keys in the order they were written

// A double as JSON: a number, or "nan", "inf", "-inf".
inline Json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// The object as one line of text, newline included. Bytes that are not UTF-8 (a file name, say)
// are replaced rather than thrown on.
inline std::string json_line(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace red
