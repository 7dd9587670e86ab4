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
