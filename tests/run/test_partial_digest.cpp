// test_partial_digest.cpp — a split run's share is sealed with the digest of its numbers; any change to a number
// (even one that keeps the share well formed) or a missing digest is found (issue 60 item 6).
#include <catch2/catch.hpp>

#include "gradflow/run/partial_digest.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

TEST_CASE("partial digest: a sealed share checks, an edited number or a missing or altered digest does not", "[run]") {
  Json p{{"chunks", {8, 20}}, {"product", {{{0.7609, 3}, {0.5, -2}}}}, {"product_size", 64}};
  seal_partial(p);
  REQUIRE(p.contains("digest"));
  CHECK(p["digest"].get<std::string>().size() == 64);
  CHECK(partial_digest_problem(p, "streamed_partial").empty());
  // the share as a task's file holds it: printed and read back, the digest still checks
  CHECK(partial_digest_problem(Json::parse(p.dump(1)), "streamed_partial").empty());

  Json edited = p;
  edited["product"][0][0][0] = 0.9;  // still a valid mantissa: only the digest can tell
  CHECK_THAT(partial_digest_problem(edited, "streamed_partial"),
             Catch::Contains("the numbers of its \"streamed_partial\" do not match its \"digest\""));
  edited = p;
  edited["product"][0][1][1] = -3;
  CHECK_FALSE(partial_digest_problem(edited, "streamed_partial").empty());
  edited = p;
  edited["digest"] = std::string(64, '0');
  CHECK_FALSE(partial_digest_problem(edited, "x").empty());
  edited = p;
  edited.erase("digest");
  CHECK_THAT(partial_digest_problem(edited, "hutchinson_partial"),
             Catch::Contains("its \"hutchinson_partial\" has no \"digest\""));
  CHECK_FALSE(partial_digest_problem(Json(5), "x").empty());
}
