#!/bin/sh
# test_train_cli.sh GRADFLOW — `gradflow train` / `train-sweep` on the command line: bad options exit 2 with a
# one-line "fix:" message and leave no file; a small train writes JSON and CSV; a train-sweep gives the same
# report with 1 and 2 threads, and a rerun with --resume reuses every run (same report again).
set -u
G="$1"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

bad() {  # expects exit 2, a message with "fix:", and no --json file
  "$G" "$@" --json "$T/bad.json" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] || fail "'$*' exited $rc, expected 2"
  grep -q "fix:" "$T/err" || fail "'$*' printed no fix: $(cat "$T/err")"
  [ ! -e "$T/bad.json" ] || fail "'$*' left a --json file"
}
bad train --lr -1
bad train --task nope
bad train --schedule cosine
bad train --save-every 5
bad train --vocab 3
bad train --heads 5 --d-model 32
bad train-sweep --lr 1e-3,x
bad train-sweep --warmup -5
bad train-sweep --placements post,zzz

S="--d-model 16 --heads 2 --seq-len 8 --vocab 8 --batch 4 --eval-size 8"
"$G" train --placement pre --layers 2 $S --steps 10 --log-every 5 -q --json "$T/t.json" --csv "$T/t.csv" || fail "train"
grep -q '"loss_floor"' "$T/t.json" || fail "train report lacks task.loss_floor"
head -1 "$T/t.csv" | grep -q "step,layer,metric,value" || fail "train CSV header"

SW="--placements post,pre --layers 2 --warmup 0,5 --lr 1e-3,1e-2 --seeds 2 --steps 10 --log-every 5 $S -q"
"$G" train-sweep $SW --threads 1 --json "$T/s1.json" --csv "$T/s1.csv" || fail "train-sweep threads 1"
"$G" train-sweep $SW --threads 2 --json "$T/s2.json" --resume "$T/res" || fail "train-sweep threads 2"
cmp -s "$T/s1.json" "$T/s2.json" || fail "train-sweep report differs between 1 and 2 threads"
[ "$(ls "$T/res" | wc -l)" -eq 16 ] || fail "--resume did not keep 16 runs"
"$G" train-sweep $SW --threads 2 --json "$T/s3.json" --resume "$T/res" || fail "train-sweep resumed"
cmp -s "$T/s1.json" "$T/s3.json" || fail "resumed train-sweep report differs"
[ "$(wc -l < "$T/s1.csv")" -eq 17 ] || fail "train-sweep CSV should hold 16 runs"
# two runs on --threads 4: each run's batch loop on its share of two threads (a nested team), the 1-thread report
SW2="--placements post,pre --layers 2 --seeds 1 --steps 10 --log-every 5 $S -q"
"$G" train-sweep $SW2 --threads 1 --json "$T/p1.json" || fail "train-sweep of two runs, threads 1"
"$G" train-sweep $SW2 --threads 4 --json "$T/p4.json" || fail "train-sweep of two runs, threads 4"
cmp -s "$T/p1.json" "$T/p4.json" || fail "train-sweep report differs between 1 thread and two runs on 2 threads each"
# figures (script and data only: no gnuplot needed)
"$G" plot "$T/t.json" --kind loss-curves -o "$T/loss.pdf" --no-render >/dev/null 2>&1 || fail "plot loss-curves"
[ -s "$T/loss.pdf.gp" ] && [ -s "$T/loss.pdf.dat" ] || fail "loss-curves wrote no script/data"
"$G" plot "$T/s1.json" --kind grad-over-training -o "$T/grad.pdf" --logx on --no-render >/dev/null 2>&1 || fail "plot grad-over-training"
[ -s "$T/grad.pdf.dat" ] || fail "grad-over-training wrote no data"
"$G" plot "$T/t.json" --kind grad-by-depth -o "$T/x.pdf" --no-render >/dev/null 2>&1
[ $? -eq 2 ] || fail "grad-by-depth should refuse a train report with exit 2"
echo "ok: bad options, train JSON/CSV, train-sweep thread-count independence and --resume, loss-curves and grad-over-training figures"

# the width axis: --d-model 16,32 in one train-sweep gives, per width, the groups and runs of a sweep at that width
# alone (every number equal), each group naming its d_model; the CSV gains the column, the resume files the width
W="--placements post,pre --layers 2 --warmup 0 --lr 1e-3,1e-2,3e-2 --seeds 2 --steps 10 --log-every 5 --heads 2 --seq-len 8 --vocab 8 --batch 4 --eval-size 8 -q"
"$G" train-sweep $W --d-model 16,32 --json "$T/w.json" --csv "$T/w.csv" --resume "$T/wres" || fail "train-sweep over widths"
"$G" train-sweep $W --d-model 16 --json "$T/w16.json" || fail "train-sweep d 16"
"$G" train-sweep $W --d-model 32 --json "$T/w32.json" || fail "train-sweep d 32"
/usr/bin/python3 - "$T/w.json" "$T/w16.json" "$T/w32.json" "$T/w.csv" <<'PY' || fail "the width axis differs from single-width sweeps"
import json, sys
w, w16, w32 = (json.load(open(f)) for f in sys.argv[1:4])
assert w["grid"]["d_model"] == [16, 32], w["grid"]
assert "d_model" not in w["config"] and w16["config"]["d_model"] == 16
assert "d_model" not in w16["grid"] and all("d_model" not in g for g in w16["groups"])
for d, single in ((16, w16), (32, w32)):
    mine = [dict(g) for g in w["groups"] if g["d_model"] == d]
    assert len(mine) == len(single["groups"]) == 2, (d, len(mine))
    for a, b in zip(mine, single["groups"]):
        a.pop("d_model")
        assert a == b, (d, a["placement"])  # every number bit for bit
    runs = [dict(r) for r in w["runs"] if r["d_model"] == d]
    for a, b in zip(runs, single["runs"]):
        a.pop("d_model")
        assert a == b
    ratios = [dict(r) for r in w["ratios"] if r["d_model"] == d]
    assert len(ratios) == 1 and {k: v for k, v in ratios[0].items() if k != "d_model"} == single["ratios"][0]
header = open(sys.argv[4]).readline().strip().split(",")
assert header[:3] == ["placement", "d_model", "layers"], header
PY
ls "$T/wres" | grep -q '^post_d32_L2_' || fail "the resume files do not name the width: $(ls "$T/wres" | head -3)"
"$G" plot "$T/w.json" --kind lr-transfer -o "$T/lrt.pdf" --no-render >/dev/null 2>&1 || fail "plot lr-transfer of a width axis"
grep -q "d = 32" "$T/lrt.pdf.gp" || fail "lr-transfer has no line for d = 32: $(grep -c title "$T/lrt.pdf.gp") titles"
"$G" plot "$T/w.json" --kind phase-diagram -o "$T/pd.pdf" --no-render >/dev/null 2>&1 || fail "plot phase-diagram of a width axis"
bad train-sweep --d-model 16,16
bad train-sweep --d-model 16,x
echo "ok: train-sweep's width axis equals single-width sweeps; CSV, resume names, lr-transfer and phase-diagram figures"
