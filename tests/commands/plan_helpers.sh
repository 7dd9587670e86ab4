# plan_helpers.sh — what the analyze --plan tests share (sourced after setting gf, the gradflow binary, and T, a
# scratch folder): fail, tasks_of DIR (the plan's task count), value_of REPORT PATH (the JSON value at a dotted
# path, a list index as a number), bad WHAT ARGS... (exit 2, one line with a fix, $T/nothing not written) and
# check_plan NAME TASKS EXPECTED WORDS... (needs cmp_reports): `gradflow analyze WORDS` run here against the same
# written as a plan of TASKS (EXPECTED tasks in plan.json), the last task run first, then the rest two at a time
# through xargs, and merged: every numeric leaf equal; merge_refuses DIR WHAT PATTERN: `gradflow merge DIR` fails,
# its message matches PATTERN, and it wrote no report.
fail() { echo "FAIL: $*"; exit 1; }
tasks_of() { /usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$1/plan.json"; }
value_of() {
  /usr/bin/python3 -c "
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v))" "$1" "$2"
}
bad() {
  what=$1
  shift
  "$gf" "$@" 2>"$T/err" >/dev/null
  rc=$?
  [ $rc -eq 2 ] || fail "$what: exit $rc, not 2: $(cat "$T/err")"
  [ "$(wc -l < "$T/err")" -eq 1 ] || fail "$what: not one line: $(cat "$T/err")"
  grep -q "fix:" "$T/err" || fail "$what: no fix: $(cat "$T/err")"
  [ ! -e "$T/nothing" ] || fail "$what: wrote $T/nothing"
}
check_plan() {
  name=$1 tasks=$2 expect=$3
  shift 3
  [ -s "$T/$name-local.json" ] || "$gf" analyze "$@" -q --json "$T/$name-local.json" || fail "$name: local run"
  dir="$T/$name-$tasks"
  "$gf" analyze "$@" --plan "$dir" --tasks "$tasks" 2>"$T/err" || fail "$name: --plan: $(cat "$T/err")"
  [ "$(tasks_of "$dir")" -eq "$expect" ] || fail "$name: $(tasks_of "$dir") tasks, not $expect"
  "$gf" task "$dir" $((expect - 1)) -q || fail "$name: task $((expect - 1))"
  if [ "$expect" -gt 1 ]; then
    seq $((expect - 2)) -1 0 | xargs -P 2 -I{} "$gf" task "$dir" {} -q --threads 1 || fail "$name: xargs tasks"
  fi
  "$gf" merge "$dir" --json "$T/$name-$tasks.json" -q 2>"$T/err" || fail "$name: merge: $(cat "$T/err")"
  $cmp_reports "$T/$name-local.json" "$T/$name-$tasks.json" || fail "$name: the merge of $tasks tasks differs from the local run"
  echo "ok: $name: $tasks tasks ($expect in the plan) merged, equal to the local run"
}
merge_refuses() {
  "$gf" merge "$1" --json "$T/x.json" -q 2>"$T/err" && fail "merge of $2: exit 0"
  grep -q "$3" "$T/err" || fail "$2: $(cat "$T/err")"
  [ ! -e "$T/x.json" ] || fail "$2: a refused merge wrote its report"
}
