// The programs' --json writer (common/json_report.hpp), on the host: every line it writes parses
// with a strict JSON parser, numbers come back at full precision, and NaN and the infinities
// follow the one documented rule (the strings "nan", "inf" and "-inf").
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "json_report.hpp"

using red::Json;

namespace {
// nlohmann-json's parser is strict: NaN, Infinity, single quotes and trailing commas are errors.
Json parse_strict(const std::string& line) {
  REQUIRE(!line.empty());
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line
  return Json::parse(line);
}
}  // namespace

TEST_CASE("json report: finite numbers round-trip at full precision") {
  for (double v : {0.0, -0.0, 1.0 / 3, 1.23e-7, 6.02214076e23, 4814.0, std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max(), static_cast<double>(std::numeric_limits<float>::max())}) {
    Json j;
    j["v"] = red::json_number(v);
    const Json back = parse_strict(red::json_line(j));
    REQUIRE(back["v"].is_number());
    CHECK(back["v"].get<double>() == v);
  }
  Json j;
  j["count"] = std::uint64_t{1} << 40;
  j["index"] = std::int64_t{-1};
  const Json back = parse_strict(red::json_line(j));
  CHECK(back["count"].get<std::uint64_t>() == std::uint64_t{1} << 40);
  CHECK(back["index"].get<std::int64_t>() == -1);
}

TEST_CASE("json report: NaN and the infinities are the strings nan, inf and -inf") {
  Json j;
  j["nan"] = red::json_number(std::nan(""));
  j["inf"] = red::json_number(std::numeric_limits<double>::infinity());
  j["neg"] = red::json_number(-std::numeric_limits<double>::infinity());
  j["result"] = Json{{"value", red::json_number(std::numeric_limits<float>::quiet_NaN())}, {"index", 7}};
  const std::string line = red::json_line(j);
  CHECK(line.find("NaN") == std::string::npos);
  CHECK(line.find("null") == std::string::npos);
  const Json back = parse_strict(line);
  CHECK(back["nan"] == "nan");
  CHECK(back["inf"] == "inf");
  CHECK(back["neg"] == "-inf");
  CHECK(back["result"]["value"] == "nan");
  CHECK(back["result"]["index"] == 7);
}

TEST_CASE("json report: keys keep their order, and bytes that are not UTF-8 do not throw") {
  Json j;
  j["chapter"] = "11_batched";
  j["device"] = std::string("GPU \xff\xfe");
  j["passed"] = true;
  const std::string line = red::json_line(j);
  CHECK(line.find("\"chapter\"") < line.find("\"device\""));
  CHECK(line.find("\"device\"") < line.find("\"passed\""));
  CHECK(parse_strict(line)["passed"] == true);
}

TEST_CASE("json report: the parser used above is strict") {
  CHECK_THROWS(Json::parse("{\"v\":NaN}\n"));
  CHECK_THROWS(Json::parse("{\"v\":inf}\n"));
  CHECK_THROWS(Json::parse("{\"v\":1,}\n"));
}
