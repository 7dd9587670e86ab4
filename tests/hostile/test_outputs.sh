#!/bin/sh
# test_outputs.sh GRADFLOW CASE — hostile outputs and limits (issue 13 items 1, 2, 3, 8). An output path that is not
# a plain new file: gradflow
# never replaces anything but a regular file, writes FIFOs and devices as they are, writes "-" to stdout, keeps a
# link and replaces its target, and accepts a legal 255-byte name. Every device and FIFO is made in this test's own
# folder, never the machine's /dev. Exit 0 pass, 1 fail, 77 skipped (with the reason).
gf=${1:?usage: test_outputs.sh GRADFLOW CASE}
case_=${2:?usage: test_outputs.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model="--placement pre --layers 1 --d-model 8 --heads 2 --seq-len 2 -q"
fail() { echo "FAIL: $*"; exit 1; }
is_json() { /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1" 2>/dev/null; }
case $case_ in
  fifo)
    mkfifo "$tmp/pipe" || fail "mkfifo"
    cat "$tmp/pipe" > "$tmp/got" &
    reader=$!
    "$gf" analyze $model --json "$tmp/pipe" || { kill $reader 2>/dev/null; fail "analyze --json FIFO exited $?"; }
    [ -p "$tmp/pipe" ] || { kill $reader 2>/dev/null; fail "the FIFO was replaced by a regular file"; }
    wait $reader
    is_json "$tmp/got" || fail "the reader did not receive the JSON report"
    ls "$tmp" | grep -q "tmp\." && fail "a temporary file was left: $(ls "$tmp")"
    echo "ok: FIFO written as it is, still a FIFO" ;;
  chardev)
    if ! mknod "$tmp/null" c 1 3 2>/dev/null; then echo "SKIPPED: mknod refused here (not root?)"; exit 77; fi
    "$gf" analyze $model --json "$tmp/null" || fail "analyze --json DEVICE exited $?"
    [ -c "$tmp/null" ] || fail "the character device was replaced by a regular file"
    ls "$tmp" | grep -q "tmp\." && fail "a temporary file was left: $(ls "$tmp")"
    echo "ok: character device written as it is, still a device" ;;
  stdout)
    "$gf" analyze $model --json - > "$tmp/out" || fail "analyze --json - exited $?"
    is_json "$tmp/out" || fail "--json - did not print the report on stdout: $(head -c 200 "$tmp/out")"
    [ -e "$tmp/-" ] || [ -e ./- ] && fail "a file named '-' was written"
    echo "ok: --json - prints the report" ;;
  long_name)
    name=$(printf 'r%.0s' $(seq 1 250)).json  # 255 bytes, the usual NAME_MAX
    [ ${#name} -eq 255 ] || fail "test setup: name of ${#name} bytes"
    "$gf" analyze $model --json "$tmp/$name" || fail "a legal 255-byte file name was refused (exit $?)"
    is_json "$tmp/$name" || fail "no report at the 255-byte name"
    [ "$(ls -A "$tmp" | wc -l)" -eq 1 ] || fail "temporary files were left: $(ls -A "$tmp")"
    echo "ok: 255-byte name written, nothing left beside it" ;;
  symlink)
    echo old > "$tmp/target.json"
    ln -s target.json "$tmp/link.json"
    "$gf" analyze $model --json "$tmp/link.json" || fail "analyze --json LINK exited $?"
    [ -L "$tmp/link.json" ] || fail "the link was replaced by a regular file"
    is_json "$tmp/target.json" || fail "the link's target was not written"
    echo "ok: the link kept, its target replaced" ;;
  directory)
    mkdir "$tmp/d"
    "$gf" analyze $model --json "$tmp/d" 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "--json DIRECTORY exited $rc"
    grep -q "directory" "$tmp/err" || fail "the message does not say it is a directory: $(cat "$tmp/err")"
    [ -d "$tmp/d" ] || fail "the directory was replaced"
    echo "ok: a directory is refused: $(cat "$tmp/err")" ;;
  plot_chardev)
    if ! command -v gnuplot > /dev/null; then echo "SKIPPED: gnuplot is not installed"; exit 77; fi
    if ! mknod "$tmp/fig.svg" c 1 3 2>/dev/null; then echo "SKIPPED: mknod refused here (not root?)"; exit 77; fi
    "$gf" analyze $model --json "$tmp/r.json" || fail "analyze exited $?"
    "$gf" plot "$tmp/r.json" --kind grad-by-depth -o "$tmp/fig.svg" > /dev/null || fail "plot -o DEVICE exited $?"
    [ -c "$tmp/fig.svg" ] || fail "the character device was replaced by the figure"
    ls "$tmp" | grep -q "tmp\." && fail "a temporary file was left: $(ls "$tmp")"
    echo "ok: plot -o DEVICE writes into it, still a device" ;;
  same_as_input)
    "$gf" export --placement pre --layers 1 --d-model 8 --heads 2 --out "$tmp/w.safetensors" || fail "export exited $?"
    cp "$tmp/w.safetensors" "$tmp/w0"
    ln -s w.safetensors "$tmp/link"
    for out in "$tmp/./w.safetensors" "$tmp/link"; do
      "$gf" analyze --weights "$tmp/w.safetensors" --heads 2 --placement pre -q --json "$out" 2> "$tmp/err"
      rc=$?
      [ $rc -eq 2 ] || fail "--json $out = --weights exited $rc"
      grep -q "fix:" "$tmp/err" || fail "no fix in: $(cat "$tmp/err")"
    done
    cmp -s "$tmp/w.safetensors" "$tmp/w0" || fail "the weights file was overwritten"
    echo "ok: an output that is an input is refused: $(cat "$tmp/err")" ;;
  same_outputs)
    "$gf" compare --placements pre --layers 1 --d-model 8 --heads 2 --seeds 1 -q --json "$tmp/f" --csv "$tmp/./f" 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "compare --json f --csv ./f exited $rc"
    [ -e "$tmp/f" ] && fail "an output was written"
    echo "ok: two outputs on one file are refused: $(cat "$tmp/err")" ;;
  rerun_report)
    spec=$(dirname "$0")/../../examples/claims/c5_bottom_ratio_24.json
    "$gf" run "$spec" --reduced -q --json "$tmp/r1.json" || fail "run SPEC exited $?"
    cp "$tmp/r1.json" "$tmp/keep.json"
    "$gf" run "$tmp/r1.json" -q || fail "run REPORT exited $?"
    cmp -s "$tmp/r1.json" "$tmp/keep.json" || fail "running a report overwrote it"
    "$gf" run "$tmp/r1.json" -q --json "$tmp/r2.json" || fail "run REPORT --json exited $?"
    "$gf" run "$tmp/r2.json" -q --json "$tmp/r3.json" || fail "run REPORT --json exited $?"
    a=$(wc -c < "$tmp/r1.json"); b=$(wc -c < "$tmp/r2.json"); c=$(wc -c < "$tmp/r3.json")
    # r2 and r3 record the report's spec where r1 recorded the spec file; neither may carry the previous report
    [ $((b - a)) -lt 100 ] && [ $((c - b)) -lt 100 ] || fail "a rerun report grows: $a -> $b -> $c bytes"
    echo "ok: a report reruns without being overwritten or growing ($a -> $b -> $c bytes)" ;;
  threads)  # not an output, but a limit checked up front (issue 13 item 8): exit 2 with one line, no crash
    for args in "compare --placements pre --layers 1 --d-model 8 --heads 2 --seeds 1 -q --threads 40000" \
                "train --placement pre --layers 1 --d-model 8 --heads 2 --steps 1 -q --threads 100000"; do
      "$gf" $args > /dev/null 2> "$tmp/err"
      rc=$?
      [ $rc -eq 2 ] && [ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "$args -> exit $rc: $(cat "$tmp/err")"
    done
    OMP_NUM_THREADS=100000 "$gf" analyze $model > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "OMP_NUM_THREADS" "$tmp/err" || fail "OMP_NUM_THREADS=100000 -> exit $rc: $(cat "$tmp/err")"
    echo "ok: thread counts past the limit refused: $(cat "$tmp/err")" ;;
  file_size)  # issue 60 item 17: a file size limit (ulimit -f) is a write error, exit 2, no temporary file left
    ( ulimit -f 4 && exec "$gf" analyze --placement pre --layers 4 --d-model 16 --heads 2 --seq-len 4 -q \
        --json "$tmp/r.json" ) > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "a report over the file size limit exited $rc (want 2; 153 is death by SIGXFSZ): $(cat "$tmp/err")"
    grep -q "cannot write '$tmp/r.json'" "$tmp/err" || fail "the message does not name the file: $(cat "$tmp/err")"
    [ -z "$(ls -A "$tmp" | grep -v '^err$')" ] || fail "files were left: $(ls -A "$tmp")"
    echo "ok: $(cat "$tmp/err")" ;;
  plot_names)  # issue 60 item 18: a figure named -fig.svg, and names of 240-251 bytes, draw like any other
    if ! command -v gnuplot > /dev/null; then echo "SKIPPED: gnuplot is not installed"; exit 77; fi
    "$gf" analyze $model --json "$tmp/r.json" || fail "analyze exited $?"
    mkdir "$tmp/f"
    (cd "$tmp/f" && "$gf" plot ../r.json --kind grad-by-depth -o ./-fig.svg > /dev/null 2> ../err) \
      || fail "plot -o ./-fig.svg exited $?: $(cat "$tmp/err")"
    grep -q "</svg>" "$tmp/f/-fig.svg" || fail "no figure at -fig.svg: $(ls -A "$tmp/f")"
    [ -f "$tmp/f/-fig.svg.gp" ] && [ -f "$tmp/f/-fig.svg.dat" ] || fail "no kept script and data: $(ls -A "$tmp/f")"
    for n in 240 247 251; do
      name=$(head -c $((n - 4)) /dev/zero | tr '\0' 'f').svg
      "$gf" plot "$tmp/r.json" --kind grad-by-depth -o "$tmp/f/$name" > /dev/null 2> "$tmp/err" \
        || fail "a $n-byte figure name exited $?: $(cat "$tmp/err")"
      grep -q "</svg>" "$tmp/f/$name" || fail "no $n-byte figure"
    done
    ls -A "$tmp/f" | grep -q "tmp" && fail "temporary files were left: $(ls -A "$tmp/f")"
    echo "ok: -fig.svg and 240-251-byte names drawn" ;;
  *) echo "unknown case $case_"; exit 2 ;;
esac
