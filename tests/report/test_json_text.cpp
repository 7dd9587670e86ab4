// test_json_text.cpp — a report whose strings hold bytes that are not UTF-8 (a path from the file system) is
// written, each such byte as \xNN, and valid UTF-8 is written as it is (issue 60 item 12).
#include <catch2/catch.hpp>

#include "gradflow/report/json_text.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

TEST_CASE("json_text: invalid UTF-8 bytes written as backslash-x and two hex digits, valid text untouched", "[report]") {
  Json r{{"config", {{"weights", std::string("ck\xff/m\xe9.safetensors")}}}, {"loss", 0.5}};
  r["layers"] = Json::array({Json{{std::string("k\xc3"), "caf\xc3\xa9"}}});  // a bad key; a good value
  REQUIRE_THROWS(r.dump());  // what the writer did before: the whole report lost
  const std::string text = json_text(r, 1);
  const Json back = Json::parse(text);
  CHECK(back["config"]["weights"] == "ck\\xFF/m\\xE9.safetensors");
  CHECK(back["layers"][0].contains("k\\xC3"));
  CHECK(back["layers"][0]["k\\xC3"] == "caf\xc3\xa9");
  CHECK(back["loss"] == 0.5);
  // valid UTF-8 (2-, 3-, 4-byte) is kept; overlong forms, surrogates and truncated sequences are not UTF-8
  const Json ok{{"s", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"}};
  CHECK(json_text(ok) == ok.dump());
  CHECK(utf8_safe(Json("\xc0\xaf"))  == "\\xC0\\xAF");      // overlong '/'
  CHECK(utf8_safe(Json("\xed\xa0\x80")) == "\\xED\\xA0\\x80");  // a surrogate
  CHECK(utf8_safe(Json("a\xe2\x82")) == "a\\xE2\\x82");     // cut short
  CHECK(utf8_safe(Json("\xf4\x90\x80\x80")) == "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
}
