// test_placements_options.cpp — the scheme options (--mix-order, --rezero-alpha, ...): declared by their
// placement, validated, reported as resolved.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

TEST_CASE("scheme options: declared by their placement, validated, reported as resolved", "[placements]") {
  // each option once in the registry's list, and in its placement's summary line
  for (const auto& p : placements())
    for (const auto& o : p->options()) {
      INFO(p->name() << " --" << o.name);
      CHECK(p->options_summary().find("--" + o.name) != std::string::npos);
      CHECK(std::count_if(scheme_options().begin(), scheme_options().end(),
                          [&](const SchemeOption& q) { return q.name == o.name; }) == 1);
    }
  ModelConfig c = small_config("mix", 4);
  c.scheme.words["mix-order"] = "sideways";
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("--mix-order 'sideways'") && Catch::Contains("fix:"));
  c.scheme.words["mix-order"] = "pre-first";
  c.scheme.counts["mix-post-layers"] = 5;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("--mix-post-layers 5 is outside 0..4"));
  c.scheme.counts["mix-post-layers"] = 1;
  CHECK_NOTHROW(c.validate());
  nlohmann::ordered_json j;
  find_placement("mix").config_fields(c, j);
  CHECK(j["mix_post_layers"] == 1);
  CHECK(j["mix_order"] == "pre-first");
  ModelConfig r = small_config("rezero", 3);
  j = nlohmann::ordered_json::object();
  find_placement("rezero").config_fields(r, j);
  CHECK(j["rezero_alpha"] == 0.0);  // the default when --rezero-alpha is not given
}
