// small_model.hpp — the small model the model and matrix-free tests share: d = 8, h = 2, d_ff = 16, so with
// n = 4 tokens every explicit Jacobian is 32 x 32, cheap and exact.
#pragma once
#include <string>

#include "gradflow/model/config.hpp"

namespace gradflow::test {

inline ModelConfig small_model(const std::string& placement, Index layers = 4, Activation activation = Activation::Relu) {
  ModelConfig c;
  c.placement = placement;
  c.layers = layers;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 16;
  c.activation = activation;
  return c;
}

}  // namespace gradflow::test
