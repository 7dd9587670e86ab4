#!/bin/sh
# test_limits.sh GRADFLOW CASE — silent wrong results and limits (issue 13 items 4-7, 10): activations beyond
# sqrt(DBL_MAX) normalize exactly instead of to zeros, training flags them as divergence, every NaN/Inf is located
# with a fix that fits (never an internal solver error), and runs that cannot fit in memory are refused before
# they allocate (each memory probe runs under a 4 GB address-space limit, so a regression fails instead of
# swapping). Exit 0 pass, 1 fail.
gf=${1:?usage: test_limits.sh GRADFLOW CASE}
case_=${2:?usage: test_limits.sh GRADFLOW CASE}
case $gf in /*) ;; *) gf=$PWD/$gf ;; esac  # the interrupt case runs in its own folder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py() { /usr/bin/python3 -c "$@"; }
# (under AddressSanitizer, whose shadow memory needs terabytes of address space, without the limit: the refusals
# come before any allocation either way)
limited() {
  if [ "${GRADFLOW_SANITIZED:-0}" = 1 ]; then "$gf" "$@"; else prlimit --as=4000000000 -- "$gf" "$@"; fi
}
# refused RC WORDS... -- ARGS: the command exits 2 and its one-line message holds every word
refused() {
  words=""
  while [ "$1" != "--" ]; do words="$words $1"; shift; done
  shift
  limited "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "$* exited $rc (want 2): $(tail -c 300 "$tmp/err")"
  for w in $words; do grep -q -- "$w" "$tmp/err" || fail "the message lacks '$w': $(cat "$tmp/err")"; done
  [ -s "$tmp/out" ] && fail "something was written on stdout"
  echo "ok: $(grep error "$tmp/err")"
}
case $case_ in
  layernorm_overflow)  # item 4: the variance overflowed and every output became exactly 0
    for extra in "--init-scale 1e160 --layers 48" "--residual-scale 1e200 --layers 4"; do
      "$gf" analyze --placement post $extra -q --json "$tmp/r.json" || fail "analyze $extra exited $?"
      py "
import json, math, sys
r = json.load(open('$tmp/r.json'))
g = [l['grad_norm'] for l in r['layers']]
assert r['loss'] != 0.0, 'loss is exactly 0'
assert all(x is not None and math.isfinite(x) and x > 0 for x in g), 'gradient norms %s' % g[:4]
" || fail "$extra: silent zeros"
    done
    echo "ok: Post-LN at --init-scale 1e160 and --residual-scale 1e200: nonzero loss, finite nonzero gradients" ;;
  train_overflow)  # item 4: at --init-scale 1e300 training ran on zeroed activations with diverged null
    "$gf" train --placement pre --layers 2 --d-model 16 --heads 2 --steps 3 --init-scale 1e300 -q --json "$tmp/t.json" \
      || fail "train exited $?"
    py "
import json
d = json.load(open('$tmp/t.json'))['diverged']
assert d and d['quantity'] == 'activation' and d['step'] == 0 and 'bound' in d, d
" || fail "the run is not flagged as diverged at step 0 by its activations"
    echo "ok: train --init-scale 1e300 diverged at step 0 (activation past the bound)" ;;
  located_explicit)  # item 5: explicit mode ended in 'internal error: TridiagEigen' (exit 4)
    py "import numpy as np; np.random.seed(0); np.save('$tmp/x.npy', np.random.randn(16, 64) * 1e300)"
    for mode in explicit matrix-free; do
      "$gf" analyze --placement pre --layers 4 --input "$tmp/x.npy" --mode $mode -q --json "$tmp/r.json" 2> "$tmp/err"
      rc=$?
      [ $rc -eq 0 ] || fail "pre, --input 1e300, --mode $mode exited $rc: $(cat "$tmp/err")"
    done
    rm -f "$tmp/r.json"
    "$gf" analyze --placement post --layers 4 --input "$tmp/x.npy" --mode explicit -q --json "$tmp/r.json" 2> "$tmp/err"
    rc=$?
    [ $rc -eq 3 ] || fail "post, --input 1e300 exited $rc (want 3, located): $(cat "$tmp/err")"
    grep -q "layer 0" "$tmp/err" || fail "not located: $(cat "$tmp/err")"
    grep -q "fix: rescale --input" "$tmp/err" || fail "item 10: the fix does not name --input: $(cat "$tmp/err")"
    [ -e "$tmp/r.json" ] && fail "a report was written by a failed run"
    echo "ok: Pre-LN at an input of 1e300 runs in both modes; Post-LN's overflow is located: $(cat "$tmp/err")" ;;
  memory_analyze)  # item 6: the estimate did not count the parameters, so a billion layers was never refused
    refused parameters "fix:" -- analyze --layers 1000000000 -q --json "$tmp/r.json"
    refused parameters -- analyze --layers 100000 --max-memory 100M -q --json "$tmp/r.json"
    # gradients only: one block's weights at a time (block_weights.hpp), so the trace is what does not fit; Admin's
    # profiled init holds them all, and names them
    refused "forward trace" -- analyze --layers 100000 --gradients-only --max-memory 100M -q --json "$tmp/r.json"
    refused parameters -- analyze --layers 100000 --gradients-only --placement admin --max-memory 100M -q --json "$tmp/r.json"
    [ -e "$tmp/r.json" ] && fail "a report was written" ; : ;;
  memory_train)
    refused "Adam moments" -- train --layers 100000 --steps 1 -q --json "$tmp/t.json"
    refused "runs at once" -- train-sweep --layers 15 --d-model 512 --heads 8 --steps 1 --lr 1e-3,1e-2 --threads 2 --max-memory 3G -q --json "$tmp/t.json"
    refused parameters -- export --layers 100000 --out "$tmp/e.safetensors"
    [ -e "$tmp/e.safetensors" ] && fail "an export was written" ; : ;;
  memory_jacobian)  # item 7: the Jacobian written (N² doubles) was not counted
    refused "explicit Jacobians" -- jacobian --seq-len 64 --d-model 64 --max-memory 50M --out "$tmp/j.npy"
    [ -e "$tmp/j.npy" ] && fail "a Jacobian was written" ; : ;;
  interrupt)  # item 12: Ctrl-C says what was kept and how to continue, leaves no temporary file, exits 130
    cd "$tmp" || fail "cd"
    # a background job of a non-interactive shell starts with SIGINT ignored, and must keep ignoring it (issue 39
    # item 13): SIGINT leaves it running, SIGTERM still stops it
    "$gf" analyze --layers 24 --seq-len 32 -q --json a.json 2> err &
    pid=$!
    sleep 2
    kill -INT $pid
    sleep 1
    kill -0 $pid 2> /dev/null || fail "a job started with SIGINT ignored was stopped by SIGINT: $(cat err)"
    kill -TERM $pid
    wait $pid
    rc=$?
    [ $rc -eq 143 ] || fail "analyze (SIGINT ignored) after SIGTERM exited $rc (want 143): $(cat err)"
    # the next jobs with SIGINT's default action, as a foreground job that Ctrl-C interrupts
    env --default-signal=INT "$gf" compare --placements post,pre --layers 2,4,6,8,12,16,24 --seeds 3 --seq-len 32 --resume kept --json out.json \
      -q 2> err &
    pid=$!
    sleep 3
    kill -INT $pid
    wait $pid
    rc=$?
    [ $rc -eq 130 ] || fail "compare after SIGINT exited $rc (want 130): $(cat err)"
    [ "$(wc -l < err)" -eq 1 ] || fail "not one line: $(cat err)"
    grep -q "interrupted; finished configurations are kept in kept; rerun the same command" err || fail "$(cat err)"
    [ -e out.json ] && fail "a report was written by an interrupted run"
    find . -name '*.tmp.*' | grep -q . && fail "temporary files left: $(find . -name '*.tmp.*')"
    "$gf" analyze --layers 24 --seq-len 32 -q --json a.json 2> err &
    pid=$!
    sleep 2
    kill -TERM $pid
    wait $pid
    rc=$?
    [ $rc -eq 143 ] || fail "analyze after SIGTERM exited $rc (want 143): $(cat err)"
    grep -q "interrupted; nothing was written" err || fail "$(cat err)"
    echo "ok: $(cat err)" ;;
  ignored_options)  # item 11: options accepted with no effect are refused (exit 2, before any work)
    small="--layers 2 --d-model 8 --heads 2 --seq-len 2 -q"
    refused "d-ff" "4\*d" -- analyze $small --d-ff 0
    refused "deepnorm-alpha" "deepnorm" -- analyze $small --placement pre --deepnorm-alpha 3
    refused "deepnorm-alpha" -- compare $small --placements post,pre --deepnorm-alpha 3
    refused "no-final-norm" -- analyze $small --placement post --no-final-norm
    refused "gradients-only" -- analyze $small --gradients-only --spectrum
    refused "gradients-only" -- analyze $small --gradients-only --mode explicit
    refused "top-k" "matrix-free" -- analyze $small --mode explicit --top-k 3
    refused "names no file" -- analyze $small --json ""
    refused "names no file" -- compare $small --placements post --json ""
    "$gf" compare $small --placements post,deepnorm --deepnorm-alpha 3 --gradients-only > /dev/null \
      || fail "--deepnorm-alpha with deepnorm among the placements was refused"
    echo "ok: ignored options refused" ;;
  memory_checkpoint)  # issue 16: loading a --weights checkpoint is counted, and refused from its headers alone
    # a GPT-2 layout (d = 8, one layer) whose wte is 2^31 x 8 F32 (64 GiB, a sparse file), and one whose mlp.c_fc
    # is 8 x 2^31: valid headers, the data section tiled exactly; nothing may be read before the refusal
    for which in wte c_fc; do
      mkdir -p "$tmp/$which"
      py "
import json, struct, os
big, d = 2 ** 31, 8
shapes = {'h.0.ln_1.weight': [d], 'h.0.ln_1.bias': [d], 'h.0.attn.c_attn.weight': [d, 3 * d], 'h.0.attn.c_attn.bias': [3 * d],
          'h.0.attn.c_proj.weight': [d, d], 'h.0.attn.c_proj.bias': [d], 'h.0.ln_2.weight': [d], 'h.0.ln_2.bias': [d],
          'h.0.mlp.c_fc.weight': [d, 4 * d], 'h.0.mlp.c_fc.bias': [4 * d], 'h.0.mlp.c_proj.weight': [4 * d, d],
          'h.0.mlp.c_proj.bias': [d], 'wpe.weight': [4, d], 'wte.weight': [16, d]}
if '$which' == 'wte': shapes['wte.weight'] = [big, d]
else: shapes['h.0.mlp.c_fc.weight'] = [d, big]
order = sorted(shapes, key=lambda n: n == ('wte.weight' if '$which' == 'wte' else 'h.0.mlp.c_fc.weight'))
h, off = {}, 0
for n in order:
    size = 4
    for k in shapes[n]: size *= k
    h[n] = {'dtype': 'F32', 'shape': shapes[n], 'data_offsets': [off, off + size]}
    off += size
text = json.dumps(h).encode(); text += b' ' * (-len(text) % 8)
with open('$tmp/$which/model.safetensors', 'wb') as f:
    f.write(struct.pack('<Q', len(text)) + text)
    f.truncate(8 + len(text) + off)
json.dump({'model_type': 'gpt2', 'n_embd': d, 'n_head': 2, 'n_layer': 1, 'n_inner': None}, open('$tmp/$which/config.json', 'w'))
" || fail "writing the sparse checkpoint"
    done
    refused "loading --weights" "its embeddings in double (--token-ids)" "raise --max-memory" -- analyze --weights "$tmp/wte" --token-ids 1,2 -q
    "$gf" analyze --weights "$tmp/wte" --seq-len 2 -q > /dev/null 2> "$tmp/err" || fail "without --token-ids the 64 GiB wte is never read, but: $(cat "$tmp/err")"
    refused "loading --weights" "its block-stack tensors in double" -- analyze --weights "$tmp/c_fc" -q
    refused "loading --weights" -- train --weights "$tmp/c_fc" --steps 1 -q ;;
  messages)  # item 10: every fix fits, messages are one short line without a blank line before them
    refused "at least 1" -- analyze --top-k 0
    [ "$(wc -c < "$tmp/err")" -lt 200 ] || fail "--top-k 0: $(wc -c < "$tmp/err") characters"
    long=$(head -c 100000 /dev/zero | tr '\0' 9)
    refused "fix:" -- analyze --layers "$long"
    [ "$(wc -c < "$tmp/err")" -lt 700 ] || fail "a 100 KB value echoed: $(wc -c < "$tmp/err") characters"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "not one line"
    if [ "${GRADFLOW_SANITIZED:-0}" != 1 ]; then  # (needs the address-space limit to stay small)
      truncate -s 50G "$tmp/huge.npy" || fail "truncate"
      refused "more than can be held in memory" "file you meant" -- analyze --input "$tmp/huge.npy"
    fi
    "$gf" export --layers 1 --d-model 16 --heads 2 --out "$tmp/w.safetensors" || fail "export"
    py "
import json, struct, numpy as np
b = open('$tmp/w.safetensors', 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8 + n]); d = b[8 + n:]
out, blobs, off = {}, [], 0
for k, v in h.items():
    if k == '__metadata__': out[k] = v; continue
    s, e = v['data_offsets']; a = np.frombuffer(d[s:e], dtype='<f8').reshape(v['shape'])
    if k.endswith('linear1.weight'): a = a.T.copy()
    bb = a.tobytes(); out[k] = {'dtype': 'F64', 'shape': list(a.shape), 'data_offsets': [off, off + len(bb)]}; off += len(bb); blobs.append(bb)
hj = json.dumps(out).encode(); hj += b' ' * ((8 - len(hj) % 8) % 8)
open('$tmp/t.safetensors', 'wb').write(struct.pack('<Q', len(hj)) + hj + b''.join(blobs))
" || fail "test setup"
    refused "looks transposed" "out_features, in_features" -- analyze --weights "$tmp/t.safetensors" --heads 2 -q ;;
  *) fail "unknown case $case_" ;;
esac
