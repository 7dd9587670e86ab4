#!/bin/sh
# golden_reports.sh OUT_DIR [GRADFLOW] — writes the outputs whose every numeric leaf must stay unchanged across a
# refactor (compare two such folders with scripts/compare_reports.py): the headline analysis, every claims spec
# at its reduced size, every placement in explicit and matrix-free mode (with each init scheme and norm), a
# jacobian .npy, an export .safetensors and a short training run. About two minutes on 2 cores.
set -e
out=${1:?usage: golden_reports.sh OUT_DIR [GRADFLOW]}
g=${2:-./build/gradflow}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
$g analyze --placement post --layers 24 -q --json "$out/headline.json" > /dev/null
for spec in "$here"/examples/claims/*.json; do
  stem=$(basename "$spec" .json)
  $g run "$spec" --reduced -q --json "$out/claims_$stem.json" > /dev/null
done
small="--layers 3 --d-model 16 --heads 2 --seq-len 4 -q"
for p in post pre sandwich deepnorm rezero mix admin b2t normformer sub-ln nonorm lns reorder hybridnorm hybridnorm-star resi-dual; do
  $g analyze --placement $p $small --spectrum --json "$out/explicit_$p.json" > /dev/null
  $g analyze --placement $p $small --mode matrix-free --top-k 2 --json "$out/mf_$p.json" > /dev/null
  own=""; [ $p = rezero ] && own="--rezero-alpha 0.3"  # an option of another placement is refused (issue 13 item 11)
  $g analyze --placement $p $small --gradients-only $own --json "$out/grads_$p.json" > /dev/null
  for init in xavier xavier-normal gpt2 t-fixup; do
    $g analyze --placement $p $small --init $init --init-scale inv-sqrt-2L --json "$out/init_${p}_$init.json" > /dev/null
  done
done
for n in rmsnorm dyt; do
  $g analyze --placement pre $small --norm $n --activation gelu --causal --json "$out/norm_$n.json" > /dev/null
done
$g analyze --placement mix --layers 4 --d-model 16 --heads 2 --seq-len 4 --mix-order pre-first --mix-post-layers 2 \
  -q --json "$out/mix_prefirst.json" > /dev/null
$g analyze --placement deepnorm $small --deepnorm-alpha 2 --deepnorm-beta 0.5 --residual-scale 0.7 \
  --json "$out/deepnorm_constants.json" > /dev/null
$g jacobian --placement admin --layers 2 --d-model 8 --heads 2 --seq-len 3 --from 0 --to 2 --out "$out/jacobian_admin.npy" \
  > /dev/null
$g export --placement normformer --layers 2 --d-model 8 --heads 2 --out "$out/export_normformer.safetensors" > /dev/null
$g train --placement pre --layers 2 --d-model 16 --heads 2 --task copy --steps 20 --lr 1e-2 --schedule constant -q \
  --json "$out/train_pre.json" > /dev/null
echo "golden_reports: wrote $(ls "$out" | wc -l) files to $out"
