#!/bin/sh
# test_data_loss.sh GRADFLOW CASE — no command loses the data it reads (issue 60 items 1-4). A checkpoint folder is
# an input: no output lands on a file of it (1). An interrupted or failed Hugging Face export leaves the folder's
# old model.safetensors and config.json as a pair (2). Training never writes its checkpoints over the checkpoint it
# started from (3). Two runs creating the same plan never both write it (4). The interrupt cases stop at a test-only
# fault point (GRADFLOW_TEST_FAULT, docs/formats.md), never by timing. Exit 0 pass, 1 fail.
gf=${1:?usage: test_data_loss.sh GRADFLOW CASE}
case_=${2:?usage: test_data_loss.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ck="$tmp/ck"
llama="--arch llama --layers 2 --d-model 16 --heads 4 --kv-heads 2"
"$gf" export --format hf-llama $llama --out "$ck" -q > /dev/null 2>&1 || fail "export of the test checkpoint exited $?"
sums() { (cd "$1" && sha256sum $(ls | sort)) ; }
sums "$ck" > "$tmp/before"
unchanged() {  # the folder holds exactly what it held
  sums "$ck" > "$tmp/after"
  cmp -s "$tmp/before" "$tmp/after" || fail "$1 changed the checkpoint folder: $(diff "$tmp/before" "$tmp/after")"
}
refused() {  # refused WHAT CMD...: exit 2, one line naming the folder, the folder unchanged
  what=$1
  shift
  "$@" > /dev/null 2> "$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "$what exited $rc (want 2): $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$what: the message is not one line: $(cat "$tmp/err")"
  grep -q "checkpoint folder\|reads" "$tmp/err" || fail "$what: the message does not name the input: $(cat "$tmp/err")"
  unchanged "$what"
}
case $case_ in
  weights_folder)
    a="analyze --weights $ck --seq-len 8 -q"
    refused "analyze --json ck/model.safetensors" "$gf" $a --json "$ck/model.safetensors"
    refused "analyze --json ck/config.json" "$gf" $a --json "$ck/config.json"
    refused "analyze --json ck/../ck/./model.safetensors" "$gf" $a --json "$ck/../ck/./model.safetensors"
    refused "analyze --json ck/other.safetensors (a name the load would read)" "$gf" $a --json "$ck/other.safetensors"
    refused "compare --json ck/model.safetensors" "$gf" compare --weights "$ck" --seq-len 8 -q --json "$ck/model.safetensors"
    refused "sweep --csv ck/config.json" "$gf" sweep --weights "$ck" --seq-len 8 --param init-scale --values 1,2 -q \
      --csv "$ck/config.json"
    refused "jacobian --out ck/model.safetensors" "$gf" jacobian --weights "$ck" --seq-len 4 --from 0 --out "$ck/model.safetensors"
    refused "export torch-encoder --out ck/model.safetensors" "$gf" export --weights "$ck" --format torch-encoder \
      --out "$ck/model.safetensors"
    # a new report beside the checkpoint is not a file of it
    "$gf" $a --json "$ck/report.json" > /dev/null 2>&1 || fail "a new report inside the folder was refused (exit $?)"
    [ -f "$ck/report.json" ] || fail "no report.json"
    echo "ok: every output onto the folder's files refused; a new report beside them written" ;;
  sharded)
    # the same weights as two shards and an index (written here: gradflow writes one file)
    /usr/bin/python3 - "$ck" <<'PY' || fail "could not shard the test checkpoint"
import json, os, struct, sys
d = sys.argv[1]
raw = open(os.path.join(d, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n]); head.pop("__metadata__", None); data = raw[8 + n:]
names = sorted(head); parts = [names[: len(names) // 2], names[len(names) // 2:]]
index = {"metadata": {}, "weight_map": {}}
for k, part in enumerate(parts):
    fname = "model-%05d-of-00002.safetensors" % (k + 1)
    h, body = {}, b""
    for t in part:
        a, b = head[t]["data_offsets"]
        h[t] = dict(head[t], data_offsets=[len(body), len(body) + b - a]); body += data[a:b]
        index["weight_map"][t] = fname
    hj = json.dumps(h).encode(); hj += b" " * ((8 - len(hj) % 8) % 8)
    open(os.path.join(d, fname), "wb").write(struct.pack("<Q", len(hj)) + hj + body)
json.dump(index, open(os.path.join(d, "model.safetensors.index.json"), "w"))
os.remove(os.path.join(d, "model.safetensors"))
PY
    sums "$ck" > "$tmp/before"
    a="analyze --weights $ck --seq-len 8 -q"
    "$gf" $a --json "$tmp/r.json" > /dev/null 2>&1 || fail "the sharded folder does not load (exit $?)"
    refused "analyze --json SHARD" "$gf" $a --json "$ck/model-00001-of-00002.safetensors"
    refused "analyze --json INDEX" "$gf" $a --json "$ck/model.safetensors.index.json"
    echo "ok: shards and index are inputs" ;;
  plan_merge)
    "$gf" compare --weights "$ck" --seq-len 8 --seeds 2 --plan "$tmp/p" -q > /dev/null 2>&1 || fail "compare --plan exited $?"
    "$gf" task "$tmp/p" 0-1 > /dev/null 2>&1 || fail "task exited $?"
    refused "merge --json ck/model.safetensors" "$gf" merge "$tmp/p" --json "$ck/model.safetensors" -q
    refused "slurm --json ck/config.json" "$gf" slurm "$tmp/p" --json "$ck/config.json"
    echo "ok: a merge never writes into the plan's checkpoint folder" ;;
  export_interrupted)
    # a 6-layer d = 256 export over the folder, stopped by SIGTERM once its files are staged
    big="--arch llama --layers 6 --d-model 256 --heads 4 --kv-heads 2"
    echo "tokenizer" > "$ck/tokenizer.json"
    sums "$ck" > "$tmp/before"
    GRADFLOW_TEST_FAULT=staged "$gf" export --format hf-llama $big --out "$ck" -q > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 143 ] || fail "the staged export exited $rc (want 143): $(cat "$tmp/err")"
    grep -q "nothing was written" "$tmp/err" || fail "the message does not say nothing was written: $(cat "$tmp/err")"
    unchanged "an export interrupted before its renames"
    [ "$(ls -A "$ck" | wc -l)" -eq 3 ] || fail "temporary files were left: $(ls -A "$ck")"
    # stopped between the two renames: the signal waits for both, and the message says the folder is new
    GRADFLOW_TEST_FAULT=commit-signal "$gf" export --format hf-llama $big --out "$ck" -q > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 143 ] || fail "the committing export exited $rc (want 143): $(cat "$tmp/err")"
    grep -q "nothing was written" "$tmp/err" && fail "it says nothing was written after renaming: $(cat "$tmp/err")"
    grep -q "holds the new export" "$tmp/err" || fail "the message does not say the folder is new: $(cat "$tmp/err")"
    "$gf" export --format hf-llama $big --out "$tmp/fresh" -q > /dev/null 2>&1 || fail "a fresh export exited $?"
    cmp -s "$ck/model.safetensors" "$tmp/fresh/model.safetensors" || fail "model.safetensors is not the new export"
    cmp -s "$ck/config.json" "$tmp/fresh/config.json" || fail "config.json is not the new export (a mixed folder)"
    grep -q tokenizer "$ck/tokenizer.json" || fail "the tokenizer beside the model was touched"
    [ "$(ls -A "$ck" | wc -l)" -eq 3 ] || fail "files were left: $(ls -A "$ck")"
    echo "ok: interrupted before the renames: the old pair; during them: the new pair, said so" ;;
  export_failed)
    sums "$ck" > "$tmp/before"
    GRADFLOW_TEST_FAULT=commit-fail "$gf" export --format hf-llama --arch llama --layers 3 --d-model 16 --heads 4 \
      --kv-heads 2 --out "$ck" -q > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "the failing export exited $rc (want 2): $(cat "$tmp/err")"
    grep -q "put back" "$tmp/err" || fail "the message does not say the old files were put back: $(cat "$tmp/err")"
    unchanged "an export whose last rename failed"
    [ "$(ls -A "$ck" | wc -l)" -eq 2 ] || fail "files were left: $(ls -A "$ck")"
    echo "ok: a failed rename puts the old pair back: $(cat "$tmp/err")" ;;
  train_own_checkpoint)
    t="train --arch llama --layers 1 --d-model 16 --heads 4 --kv-heads 2 --steps 5 --batch 2 --seq-len 8 -q"
    "$gf" $t --save-every 5 --checkpoint-dir "$tmp/tr" > /dev/null 2>&1 || fail "the first training exited $?"
    w="$tmp/tr/step_000005.safetensors"
    [ -f "$w" ] || fail "no $w: $(ls "$tmp/tr")"
    sha256sum "$tmp/tr/"* > "$tmp/tb"
    "$gf" $t --weights "$w" --save-every 5 --checkpoint-dir "$tmp/tr" > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "training over its own input exited $rc (want 2): $(cat "$tmp/err")"
    grep -q "step_000005" "$tmp/err" || fail "the message does not name the checkpoint: $(cat "$tmp/err")"
    sha256sum "$tmp/tr/"* > "$tmp/ta"
    cmp -s "$tmp/tb" "$tmp/ta" || fail "the checkpoint folder changed"
    "$gf" $t --weights "$w" --save-every 5 --checkpoint-dir "$tmp/tr2" > /dev/null 2>&1 || fail "training into another folder exited $?"
    echo "ok: $(cat "$tmp/err")" ;;
  plan_race)
    # run A pauses just before creating its plan; run B (another configuration) creates it; A must not overwrite it
    GRADFLOW_TEST_FAULT=plan-create GRADFLOW_TEST_RESUME="$tmp/go" "$gf" compare --placements post,pre --layers 1 \
      --d-model 8 --heads 2 --seq-len 2 --seeds 1 --plan "$tmp/p" -q > "$tmp/a.out" 2> "$tmp/a.err" &
    pa=$!
    for i in $(seq 1 600); do grep -q "test pause" "$tmp/a.err" 2>/dev/null && break; sleep 0.1; done
    grep -q "test pause" "$tmp/a.err" || { kill $pa; fail "run A never reached the pause: $(cat "$tmp/a.err")"; }
    "$gf" compare --placements post,pre,sandwich --layers 1 --d-model 8 --heads 2 --seq-len 2 --seeds 1 \
      --plan "$tmp/p" -q > /dev/null 2> "$tmp/b.err" || { kill $pa; fail "run B exited $?: $(cat "$tmp/b.err")"; }
    cp "$tmp/p/plan.json" "$tmp/plan_b.json"
    touch "$tmp/go"
    wait $pa
    rc=$?
    [ $rc -eq 2 ] || fail "run A exited $rc (want 2): $(cat "$tmp/a.err")"
    grep -q "already holds another plan" "$tmp/a.err" || fail "run A's message: $(cat "$tmp/a.err")"
    cmp -s "$tmp/p/plan.json" "$tmp/plan_b.json" || fail "run A replaced run B's plan"
    echo "ok: $(tail -1 "$tmp/a.err")" ;;
  non_utf8_paths)  # issue 60 item 12: a path with bytes that are not UTF-8 is written escaped; the report is kept
    bad="$tmp/m$(printf '\351')t"
    mkdir "$bad" || fail "mkdir of a Latin-1 name"
    cp "$ck/"* "$bad/"
    "$gf" analyze --weights "$bad" --seq-len 4 -q --json "$tmp/r.json" > /dev/null 2> "$tmp/err" \
      || fail "analyze of a Latin-1 folder exited $? (4 is the report writer's internal error): $(cat "$tmp/err")"
    grep -q 'm\\\\xE9t' "$tmp/r.json" || fail "the path is not written as m\\xE9t: $(grep weights "$tmp/r.json")"
    t="train --arch llama --layers 1 --d-model 16 --heads 4 --kv-heads 2 --steps 2 --batch 2 --seq-len 8 -q"
    "$gf" $t --save-every 2 --checkpoint-dir "$bad/tr" --json "$tmp/t.json" > /dev/null 2> "$tmp/err" \
      || fail "train with a Latin-1 --checkpoint-dir exited $?: $(cat "$tmp/err")"
    /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/t.json" || fail "the train report is not JSON"
    [ -f "$bad/tr/step_000002.safetensors" ] || fail "no checkpoint in the Latin-1 folder"
    "$gf" compare --weights "$bad" --seq-len 4 --seeds 1 -q --resume "$tmp/res" --json "$tmp/c1.json" > /dev/null 2>&1 \
      || fail "compare --resume of a Latin-1 folder exited $?"
    "$gf" compare --weights "$bad" --seq-len 4 --seeds 1 -q --resume "$tmp/res" --json "$tmp/c2.json" > /dev/null 2> "$tmp/err" \
      || fail "compare --resume again exited $?: $(cat "$tmp/err")"
    echo "ok: Latin-1 paths written as \\xNN in analyze, train and compare reports; resume reuses its results" ;;
  *) fail "unknown case $case_" ;;
esac
