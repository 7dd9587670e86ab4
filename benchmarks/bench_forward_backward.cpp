// bench_forward_backward.cpp — one forward + backward (every input and parameter gradient) of a Post-LN stack,
// repeated in one process, for the warm side-by-side with PyTorch in benchmarks/bench_matrix_free.py (`gradflow
// analyze --gradients-only` is one-shot: it also pays for first-touching its memory).
//   bench_forward_backward LAYERS D_MODEL HEADS D_FF SEQ_LEN REPEATS
// Prints one JSON object: the first (cold) run and every later one, in seconds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "process/runtime_env.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/core/rng.hpp"

using namespace gradflow;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);  // as the gradflow executable does
  if (argc != 7) {
    std::fprintf(stderr, "usage: bench_forward_backward LAYERS D_MODEL HEADS D_FF SEQ_LEN REPEATS\n");
    return 2;
  }
  ModelConfig cfg;
  cfg.placement = "post";
  cfg.layers = std::atol(argv[1]);
  cfg.d_model = std::atol(argv[2]);
  cfg.heads = std::atol(argv[3]);
  cfg.d_ff = std::atol(argv[4]);
  const Index n = std::atol(argv[5]);
  const int repeats = std::atoi(argv[6]);
  Model model(cfg);
  initialize(model, InitConfig{});
  const Mat x = random_normal(0, "input", n, cfg.d_model), g = random_normal(0, "cotangent", n, cfg.d_model);
  std::vector<double> times;
  double check = 0;
  for (int r = 0; r <= repeats; ++r) {
    const auto t = Clock::now();
    const Trace trace = model.forward(x);
    ParamGrads grads(model.params());  // fresh every run, as PyTorch's zero_grad(set_to_none=True)
    std::vector<Mat> dx;
    model.backward(trace, g, &grads, &dx);
    times.push_back(std::chrono::duration<double>(Clock::now() - t).count());
    check += dx[0](0, 0);
  }
  std::printf("{\"first_run\": %.6f, \"runs\": [", times[0]);
  for (size_t i = 1; i < times.size(); ++i) std::printf("%s%.6f", i > 1 ? ", " : "", times[i]);
  std::printf("], \"check\": %.6e}\n", check);
  return 0;
}
