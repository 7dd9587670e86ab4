#!/bin/sh
# test_injection.sh GRADFLOW CASE — no code runs from a name, no output replaces an input (issue 39 items 1-7):
# a report or figure whose name holds a newline and a gnuplot command, Slurm options holding a newline and a shell
# command, a plan folder with a space and a %, a figure (or its script or data) onto its input, a truncated figure,
# an interrupted plot, a plan.json naming outputs, merge and slurm writing onto the plan's own files.
# Exit 0 pass, 1 fail, 77 skipped (with the reason).
gf=${1:?usage: test_injection.sh GRADFLOW CASE}
case_=${2:?usage: test_injection.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model="--placement pre --layers 1 --d-model 8 --heads 2 --seq-len 2 -q"
fail() { echo "FAIL: $*"; exit 1; }
nl='
'
one_line() { [ "$(wc -l < "$1")" -le 1 ] || fail "the message is not one line: $(cat "$1")"; }
plan() {  # plan DIR: a two-task compare plan
  "$gf" compare --placements post,pre --layers 1 --d-model 8 --heads 2 --seq-len 2 --seeds 1 --plan "$1" -q \
    > /dev/null 2>&1 || fail "compare --plan '$1' exited $?"
}
case $case_ in
  plot_report_name)
    # the report's name reaches the script's header (the command line): a newline there once started a gnuplot
    # command, which system() turns into a shell command
    rep="$tmp/rep${nl}system(\"touch pwned\")${nl}#.json"  # gnuplot runs in $tmp
    "$gf" analyze $model --json "$rep" || fail "analyze --json exited $?"
    "$gf" plot "$rep" --kind grad-by-depth -o "$tmp/fig.svg" --no-render 2> "$tmp/err" || fail "plot exited $?: $(cat "$tmp/err")"
    grep -q '^system(' "$tmp/fig.svg.gp" && fail "the report's name wrote a command line into the script: $(grep -n '^system' "$tmp/fig.svg.gp")"
    if command -v gnuplot > /dev/null; then
      (cd "$tmp" && gnuplot fig.svg.gp > /dev/null 2>&1) || fail "gnuplot failed on the script"
      [ -e "$tmp/pwned" ] && fail "gnuplot ran a command from the report's name"
    fi
    echo "ok: the report's name stays inside a quoted string of the script" ;;
  plot_output_name)
    "$gf" analyze $model --json "$tmp/r.json" || fail "analyze exited $?"
    for out in "$tmp/fig${nl}system(\"touch $tmp/pwned\")${nl}#.svg" "$tmp/d${nl}x/fig.svg"; do
      "$gf" plot "$tmp/r.json" --kind grad-by-depth -o "$out" 2> "$tmp/err"
      rc=$?
      [ $rc -eq 2 ] || fail "plot -o with a newline exited $rc: $(cat "$tmp/err")"
      one_line "$tmp/err"
      grep -q "control character" "$tmp/err" || fail "the message does not name the problem: $(cat "$tmp/err")"
    done
    [ "$(ls "$tmp")" = "$(printf 'err\nr.json')" ] || fail "files were written: $(ls "$tmp")"
    [ -e "$tmp/pwned" ] && fail "a command ran"
    echo "ok: a figure path with a newline is refused, nothing written" ;;
  sbatch_options)
    plan "$tmp/p"
    for opt in --partition --account --time --mem --gres --merge-time --merge-mem; do
      "$gf" slurm "$tmp/p" $opt "1${nl}touch $tmp/pwned" > "$tmp/out" 2> "$tmp/err"
      rc=$?
      [ $rc -eq 2 ] || fail "slurm $opt with a newline exited $rc: $(cat "$tmp/err")"
      one_line "$tmp/err"
      grep -q -- "$opt" "$tmp/err" || fail "the message does not name $opt: $(cat "$tmp/err")"
      [ -e "$tmp/p/slurm" ] && fail "slurm $opt with a newline wrote $(ls "$tmp/p/slurm")"
    done
    "$gf" slurm "$tmp/p" --time 1h > /dev/null 2> "$tmp/err" && fail "--time 1h (not Slurm's form) was accepted"
    "$gf" slurm "$tmp/p" --partition gpu --account a-1 --time 1-00:30 --mem 4G --gres gpu:1 --merge-time 10 \
      --merge-mem 500M > /dev/null 2> "$tmp/err" || fail "Slurm's own forms were refused: $(cat "$tmp/err")"
    bash -n "$tmp/p/slurm/array.sbatch" || fail "the array script is not valid shell"
    echo "ok: every #SBATCH option outside Slurm's form is refused before a script is written" ;;
  sbatch_dir)
    d="$tmp/my plan 50%x"
    plan "$d"
    "$gf" slurm "$d" > "$tmp/out" 2> "$tmp/err" || fail "slurm on a folder with a space and % exited $?: $(cat "$tmp/err")"
    grep -q "^#SBATCH --output=\"$tmp/my plan 50%%x/slurm/task-%A_%a.out\"$" "$d/slurm/array.sbatch" ||
      fail "the --output directive: $(grep output "$d/slurm/array.sbatch")"
    grep -q "^exec '.*' task '$d' " "$d/slurm/array.sbatch" || fail "the task line: $(grep exec "$d/slurm/array.sbatch")"
    grep -q "sbatch --parsable '$d/slurm/array.sbatch'" "$tmp/out" || fail "the submit hint is not quoted: $(cat "$tmp/out")"
    for s in array merge; do bash -n "$d/slurm/$s.sbatch" || fail "the $s script is not valid shell"; done
    bad="$tmp/p${nl}touch $tmp/pwned"
    plan "$bad"
    "$gf" slurm "$bad" > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "slurm on a folder with a newline exited $rc"
    one_line "$tmp/err"
    [ -e "$bad/slurm" ] && fail "scripts were written for a folder with a newline"
    echo "ok: a folder with a space and % is quoted and escaped; one with a newline is refused" ;;
  plot_onto_input)
    # issue 39 item 4: the figure, its .gp and its .dat are checked against the inputs like every other output
    "$gf" analyze $model --json "$tmp/rep.pdf" || fail "analyze exited $?"
    cp "$tmp/rep.pdf" "$tmp/keep.json"
    "$gf" plot "$tmp/rep.pdf" --kind grad-by-depth -o "$tmp/rep.pdf" 2> "$tmp/err"
    [ $? -eq 2 ] || fail "plot rep.pdf -o rep.pdf was not refused: $(cat "$tmp/err")"
    cmp -s "$tmp/rep.pdf" "$tmp/keep.json" || fail "plot -o INPUT changed the input"
    cp "$tmp/keep.json" "$tmp/fig.svg.dat"
    "$gf" plot "$tmp/fig.svg.dat" --kind grad-by-depth -o "$tmp/fig.svg" --no-render 2> "$tmp/err"
    [ $? -eq 2 ] || fail "plot fig.svg.dat -o fig.svg (the data file is the input) was not refused: $(cat "$tmp/err")"
    cmp -s "$tmp/fig.svg.dat" "$tmp/keep.json" || fail "the input fig.svg.dat was overwritten"
    ln -s keep.json "$tmp/other.svg.dat"
    "$gf" plot "$tmp/keep.json" --kind grad-by-depth -o "$tmp/other.svg" --no-render 2> "$tmp/err"
    [ $? -eq 2 ] || fail "a .dat linked to the input was not refused: $(cat "$tmp/err")"
    one_line "$tmp/err"
    /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/keep.json" || fail "the linked input was destroyed"
    echo "ok: the figure, its script and its data never replace an input" ;;
  plot_truncated)
    # issue 39 item 6: gnuplot exits 0 on a full disk, leaving a truncated figure; it must not replace the old one
    "$gf" analyze $model --json "$tmp/r.json" || fail "analyze exited $?"
    printf '%s\n' '#!/bin/sh' 'out=${2#outfile=?}; out=${out%%[!A-Za-z0-9./_-]*}' 'printf "<svg><g>" > "$out"' \
      'exit 0' \
      > "$tmp/fake-gnuplot"
    chmod +x "$tmp/fake-gnuplot"
    echo "old figure" > "$tmp/fig.svg"
    GRADFLOW_GNUPLOT="$tmp/fake-gnuplot" "$gf" plot "$tmp/r.json" --kind grad-by-depth -o "$tmp/fig.svg" 2> "$tmp/err"
    rc=$?
    [ $rc -ne 0 ] || fail "a truncated figure was accepted (exit 0)"
    one_line "$tmp/err"
    grep -q "incomplete" "$tmp/err" || fail "the message does not say the figure is incomplete: $(cat "$tmp/err")"
    [ "$(cat "$tmp/fig.svg")" = "old figure" ] || fail "the old figure was replaced by the truncated one"
    ls "$tmp" | grep -q "tmp\." && fail "a temporary file was left: $(ls "$tmp")"
    echo "ok: a truncated figure is refused and the old one kept" ;;
  plot_interrupt)
    # issue 39 item 7: SIGTERM while gnuplot draws: gnuplot stopped and reaped, no temporary file, nothing written
    # (the old message said "nothing was written" after the script and data had been replaced)
    "$gf" analyze $model --json "$tmp/r.json" || fail "analyze exited $?"
    mkdir "$tmp/out"
    printf '%s\n' '#!/bin/sh' 'echo $$ > "$MARK/child.pid"' 'out=${2#outfile=?}; out=${out%%[!A-Za-z0-9./_-]*}' \
      'printf "<svg" > "$out"' 'exec sleep 60' > "$tmp/slow-gnuplot"
    chmod +x "$tmp/slow-gnuplot"
    MARK=$tmp GRADFLOW_GNUPLOT="$tmp/slow-gnuplot" "$gf" plot "$tmp/r.json" --kind grad-by-depth -o "$tmp/out/fig.svg" \
      2> "$tmp/err" &
    gpid=$!
    i=0
    while [ ! -s "$tmp/child.pid" ]; do
      i=$((i + 1)); [ $i -lt 200 ] || { kill $gpid; fail "the fake gnuplot never started: $(cat "$tmp/err")"; }
      sleep 0.05
    done
    sleep 0.2
    kill -TERM $gpid
    wait $gpid
    rc=$?
    [ $rc -eq 143 ] || fail "plot after SIGTERM exited $rc: $(cat "$tmp/err")"
    child=$(cat "$tmp/child.pid")
    sleep 0.2
    kill -0 "$child" 2>/dev/null && { kill "$child"; fail "gnuplot (PID $child) kept running after the interrupt"; }
    [ -z "$(ls -A "$tmp/out")" ] || fail "files were left: $(ls -A "$tmp/out")"
    grep -q "nothing was written" "$tmp/err" || fail "the message: $(cat "$tmp/err")"
    echo "ok: an interrupted plot stops gnuplot and leaves nothing: $(cat "$tmp/err")" ;;
  plan_spec_outputs)
    # issue 39 item 3: a plan.json whose spec names outputs (json, csv, resume) makes neither task nor merge write them
    plan "$tmp/p"
    sed "s|\"options\": {|\"options\": {\"json\": \"$tmp/evil.json\", \"csv\": \"$tmp/evil.csv\", \"resume\": \"$tmp/evil\",|" \
      "$tmp/p/plan.json" > "$tmp/edited" && mv "$tmp/edited" "$tmp/p/plan.json"
    grep -q evil.json "$tmp/p/plan.json" || fail "the test could not edit plan.json"
    "$gf" task "$tmp/p" 0-1 > /dev/null 2> "$tmp/err" || fail "task exited $?: $(cat "$tmp/err")"
    "$gf" merge "$tmp/p" -q 2> "$tmp/err" || fail "merge exited $?: $(cat "$tmp/err")"
    "$gf" merge "$tmp/p" --json "$tmp/good.json" -q 2> "$tmp/err" || fail "merge --json exited $?: $(cat "$tmp/err")"
    [ -s "$tmp/good.json" ] || fail "merge --json wrote no report"
    ls "$tmp" | grep -q evil && fail "an output named by plan.json was written: $(ls "$tmp")"
    echo "ok: outputs come only from the command line, never from plan.json" ;;
  plan_own_files)
    # issue 39 item 5: merge and slurm outputs onto the plan's own files are refused before any work
    plan "$tmp/p"
    "$gf" task "$tmp/p" 0-1 > /dev/null 2>&1 || fail "task exited $?"
    cp "$tmp/p/plan.json" "$tmp/plan.before"
    name=$(ls "$tmp/p/results" | head -1)
    cp "$tmp/p/results/$name" "$tmp/result.before"
    for out in "$tmp/p/plan.json" "$tmp/p/./results/$name" "$tmp/p/results/new.json" "$tmp/p/failed/x.json"; do
      for cmd in merge slurm; do
        "$gf" $cmd "$tmp/p" --json "$out" > /dev/null 2> "$tmp/err"
        rc=$?
        [ $rc -eq 2 ] || fail "$cmd --json $out exited $rc: $(cat "$tmp/err")"
        one_line "$tmp/err"
        grep -q "plan's own" "$tmp/err" || fail "the message does not name the problem: $(cat "$tmp/err")"
      done
      "$gf" merge "$tmp/p" --csv "$out" -q > /dev/null 2> "$tmp/err" && fail "merge --csv $out was accepted"
    done
    ln -s "$tmp/p/plan.json" "$tmp/link.json"
    "$gf" merge "$tmp/p" --json "$tmp/link.json" -q > /dev/null 2>&1 && fail "merge --json through a link to plan.json was accepted"
    cmp -s "$tmp/p/plan.json" "$tmp/plan.before" || fail "plan.json changed"
    cmp -s "$tmp/p/results/$name" "$tmp/result.before" || fail "a result changed"
    [ -e "$tmp/p/results/new.json" ] && fail "a file was written into results/"
    "$gf" merge "$tmp/p" --json "$tmp/p/report.json" -q 2> "$tmp/err" || fail "merge --json DIR/report.json exited $?: $(cat "$tmp/err")"
    echo "ok: merge and slurm refuse outputs onto plan.json, results/ and failed/" ;;
  *) echo "unknown case $case_"; exit 1 ;;
esac
