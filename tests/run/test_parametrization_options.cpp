// test_parametrization_options.cpp — --parametrization, --base-width, --base-depth as the command line and spec files
// set them (run/model_settings.cpp): the values reach the model, and the combinations that would set one factor
// twice or leave a base unset are refused by name.
#include <catch2/catch.hpp>

#include "gradflow/run/model_settings.hpp"
#include "resolved_options.hpp"

using namespace gradflow;

using gradflow::test::resolved;

TEST_CASE("parametrization options: values, and the combinations refused by name", "[run][parametrization]") {
  const RunConfig rc = resolved({{"parametrization", "completep"}, {"base-width", "16"}, {"base-depth", "3"},
                                 {"layers", "12"}, {"d-model", "64"}});
  CHECK(rc.model.param.kind == ParametrizationKind::CompleteP);
  CHECK(rc.model.factors().width_mult == 4.0);
  CHECK(rc.model.branch_multiplier() == 0.25);
  CHECK(resolved({}).model.param.kind == ParametrizationKind::Sp);
  CHECK_THROWS_WITH(resolved({{"parametrization", "mup"}}), Catch::Contains("--base-width"));
  CHECK_THROWS_WITH(resolved({{"parametrization", "depth-mup"}, {"base-width", "8"}}), Catch::Contains("--base-depth"));
  CHECK_THROWS_WITH(resolved({{"base-width", "8"}}), Catch::Contains("--parametrization"));
  CHECK_THROWS_WITH(resolved({{"parametrization", "nope"}}), Catch::Contains("depth-mup"));
  CHECK_THROWS_WITH(resolved({{"base-width", "0"}}), Catch::Contains("--base-width"));
  CHECK_THROWS_WITH(resolved({{"parametrization", "depth-mup"}, {"base-width", "8"}, {"base-depth", "2"},
                              {"residual-scale", "0.5"}}),
                    Catch::Contains("--residual-scale"));
  CHECK_THROWS_WITH(resolved({{"parametrization", "completep"}, {"base-width", "8"}, {"base-depth", "2"},
                              {"init-scale", "inv-sqrt-2L"}}),
                    Catch::Contains("--init-scale inv-sqrt-2L"));
  // width only: --residual-scale and inv-sqrt-2L are other factors, and multiply
  const RunConfig mup = resolved({{"parametrization", "mup"}, {"base-width", "8"}, {"residual-scale", "0.5"},
                                  {"init-scale", "inv-sqrt-2L"}});
  CHECK(mup.model.residual_scale == 0.5);
  CHECK(mup.init.scale < 1.0);
}
