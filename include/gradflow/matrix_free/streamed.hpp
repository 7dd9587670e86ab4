// streamed.hpp — EXACT Frobenius norms of P_l = dy/dx_l and B_l = dx_{l+1}/dx_l without forming an (N, N) matrix
// (N = n·d; --mode streamed): the N rows of the identity travel down the VJP chain in chunks of K stacked
// cotangents, (K·n, d) each. After the head and blocks L−1..l, cotangent e_i has become P_lᵀe_i, the i-th row of P_l,
// so Σ_i ‖P_lᵀe_i‖² = ‖P_l‖_F² exactly (up to rounding); ‖B_l‖_F² the same through block l alone (for l = L−1 the
// head is part of B_l, as in explicit mode: jacobian_chain.hpp). Memory O(K·N + forward trace); cost N cotangents
// through every block, twice with the B_l.
// Only sums of squares are formed, never PᵀP: the mean of σ² is ‖P‖_F²/N exactly; single singular values are not
// available here (they need the full spectrum of explicit mode; an accumulated PᵀP loses every σ below ~1e-8·σ_max).
// Rounding: each chunk's squared norm is one Eigen reduction, the chunks are added in order, so a different K sums
// in a different order (results agree to rounding, not bit for bit); the same K gives the same bits every run.
// Split runs (analyze --plan): a sweep over chunks [begin, end) records each chunk's sums as it adds them
// (ChunkSquares); streamed_from_chunks adds the records of every chunk in chunk order, the very additions of one
// sweep over all chunks, so the merged norms equal the single run's bit for bit whichever tasks computed which chunks.
#pragma once
#include <functional>
#include <vector>

#include "gradflow/matrix_free/jacobian_chain.hpp"

namespace gradflow {

// Σ of squares kept as mantissa·2^exp2, so the squares of products far beyond 1e±154 stay representable.
struct SquareSum {
  double mantissa = 0;
  long exp2 = 0;
  void add(double value, long value_exp2);  // adds value·2^value_exp2 (value ≥ 0)
  double value() const;                     // mantissa·2^exp2: ±Inf/0 when beyond a double
  double log10() const;                     // log10 of the sum, finite whenever the sum is positive
};

struct ExactNorm {
  double value = 0;             // ‖A‖_F (Inf when beyond a double; log10_value stays finite)
  double log10_value = 0;       // log10 ‖A‖_F (−Inf for A = 0)
  double mean_sq_singular = 0;  // ‖A‖_F²/N: the exact mean of σ_i² over the N = min(rows, cols) singular values
  double rms_gain = 0;          // ‖A‖_F/√cols: the RMS gain of a random input direction (= √mean σ² when square)
};
// N: the number of singular values min(rows, cols); cols: the input's size (0: N, a square A).
ExactNorm exact_norm_from(const SquareSum& s, Index N, Index cols = 0);

// The sizes a sweep's norms are taken over: the rows pushed (N_out = n·d for P_l; with blocks the state's n·width,
// ResiDual's 2n·d), chunked K at a time, and each B_l's rows (n·out_width(l)).
struct StreamedShape {
  Index out_rows = 0, state_rows = 0;  // N_out, N_state
  std::vector<Index> block_rows;        // n·out_width(l), l = 0..L−1 (empty without blocks)
  Index rows_per_chunk = 0;             // K used (min(K, total))
  Index total_rows() const;             // the rows the chunks cover: N_out, or max(N_out, N_state) with blocks
  Index chunks() const;                 // ⌈total_rows / rows_per_chunk⌉
  bool operator==(const StreamedShape& o) const {
    return out_rows == o.out_rows && state_rows == o.state_rows && block_rows == o.block_rows &&
           rows_per_chunk == o.rows_per_chunk;
  }
};

// One chunk's contribution, as the sweep adds it: per layer the chunk's Σ of squares of P_l's rows (and B_l's),
// each kept as SquareSum (0 where the chunk has no rows of that matrix).
struct ChunkSquares {
  Index chunk = 0;
  std::vector<SquareSum> product, block;  // l = 0..L−1 (block empty without blocks)
};

struct StreamedSweep {
  std::vector<ExactNorm> product;  // ‖P_l‖_F, l = 0..L−1 (a part of a sweep: empty)
  std::vector<ExactNorm> block;    // ‖B_l‖_F, l = 0..L−1 (empty unless asked, or a part)
  Index rows_per_chunk = 0;        // K actually used (min(K, N))
  Index chunks = 0;                // the chunks of the whole sweep
  StreamedShape shape;
  std::vector<ChunkSquares> part;  // a part of a sweep (chunks [begin, end)): each chunk's record, in chunk order
};

// Chunks [begin, end) of a sweep (end −1: to the last chunk); the whole sweep by default.
struct ChunkRange {
  Index begin = 0, end = -1;
  bool whole() const { return begin == 0 && end < 0; }
};

// The whole sweep's norms from every chunk's record (`chunks`: each chunk of `shape` exactly once, in chunk order),
// added as one sweep adds them. Error (Internal) when a chunk is missing, repeated, out of order or of another shape.
StreamedSweep streamed_from_chunks(const StreamedShape& shape, const std::vector<ChunkSquares>& chunks);

// What the sweep pushes its identity rows through: two stacks of cotangents (kPStack carries rows of P_l down the
// whole chain, kBStack rows of one B_l at a time), each kept as 2^exp2 · m in the engine's memory. The CPU's is the
// model's own VJPs (JacobianChain, in streamed.cpp); the device engines' run the same chain on a backend's kernels
// (matrix_free/device_chain.hpp).
class CotangentStacks {
 public:
  static constexpr int kPStack = 0, kBStack = 1;
  virtual ~CotangentStacks() = default;
  virtual Index layers() const = 0;
  virtual Index tokens() const = 0;          // n
  virtual Index state_width() const = 0;     // the state's width (2d for two streams)
  virtual Index out_width(Index l) const = 0;  // B_l's output width: the state's, y's (d) for l = L−1
  // The stack becomes rows start .. start+k−1 of the identity of size n·width (scale 2^0).
  virtual void set_identity(int stack, Index start, Index k, Index width) = 0;
  // The stack becomes B_lᵀ·stack (for l = L−1 the head's VJP first); NaN/Inf: Error(Numeric) naming the block.
  virtual void vjp(int stack, Index l) = 0;
  virtual void add_squares(int stack, SquareSum& sum) const = 0;  // Σ of the stack's squares, its scale included
};

// K ≥ 1 identity rows per chunk (clamped to N). after_block(l, k) is called as a chunk of k rows leaves block l.
// NaN/Inf stops with Error(Numeric) naming the block (jacobian_chain.hpp). A part (`range` not whole) computes its
// chunks alone and returns their records (StreamedSweep::part), no norms; Error when the range is not within the
// sweep's chunks.
StreamedSweep streamed_frobenius(CotangentStacks& stacks, Index K, bool with_blocks,
                                 const std::function<void(Index, Index)>& after_block = {}, ChunkRange range = {});
// "B_l = dx_{l+1}/dx_l (streamed identity rows)": what a streamed sweep's errors name (every engine's).
std::string streamed_block_name(Index l);
// The CPU engine: the model's own VJPs on host matrices.
StreamedSweep streamed_frobenius(const Model& model, const Trace& trace, Index K, bool with_blocks,
                                 const std::function<void(Index, Index)>& after_block = {}, ChunkRange range = {});

}  // namespace gradflow
