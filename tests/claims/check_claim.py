#!/usr/bin/python3
"""check_claim.py — run one claims spec and check its report against committed expected values.

usage: check_claim.py GRADFLOW SPEC EXPECTED [--out REPORT.json] [--report REPORT.json] [--update]

EXPECTED is examples/claims/expected/<stem>.reduced.json (the spec run with `--reduced`, ctest label `claims`)
or <stem>.full.json (the spec at full size, ctest label `claims-full`; the numbers docs/findings.md prints):

  {"spec": "<stem>.json", "run": "reduced" | "full",
   "values":   {"<path>": <number>, ...},
   "findings": [{"says": "<the claim's direction, in words>", "check": "<operand> <op> <operand>"}, ...],
   "verdicts": {"<a spec verdict's says>": "holds" | "fails" | "undetermined", ...},
   "not_shown": "<optional: what the reduced run cannot show, and why>"}

A <path> addresses one number in the report: segments joined by '/', each a key of an object
("summary.bottom_to_top_grad_ratio" is one key), an index of a list ("per_layer/0", "-1" = last), or a selector
of the one list element whose fields have the given values ("groups[placement=post,layers=24]",
"runs[placement=pre,lr=0.1,warmup=0]", "curve[step=100]"; numbers compare as numbers, 1e-3 == 0.001).
An <operand> (a key of "values", either side of a check) is a number, a path, or one of abs(A), inv(A) = 1/A,
sq(A) = A², div(A, B) = A/B of operands, and max(P), min(P) over every number a path P addresses (in P, a '*'
segment stands for every element of a list, and a selector may match several elements).
<op> is one of < <= > >= ==. "env" (optional): environment variables for the gradflow run.

Comparison of "values":
  reduced: numbers as --update writes them (shortest round-trip form); each measured value must agree to REL_TOL
           (relative; an expected 0 must be measured exactly 0).
  full:    strings exactly as docs/findings.md prints them ("0.733", "1.8", "6.4e-5"); the measured value must round
           to the printed one: |measured - printed| <= half a unit in the printed value's last digit. A JSON null
           means the report must hold null there (e.g. "no converging warmup" in a training grid).
Every "findings" check must hold in both. A spec change that moves a number or flips a finding fails.
"verdicts" (optional): each statement of the spec's "verdicts" (the reduced run: "reduced_verdicts"), decided by
gradflow at its level (docs/experiments.md, "Claims decided at a level"), must reach the verdict given; every statement
the report decides must be listed (--update fills them in).

--update: rerun (reduced), or read --report (full), and rewrite every value of "values" (paths kept; a null value is
filled in; a full file's strings keep their number of significant digits), then check the findings. Use it after a change that is meant to move the numbers, and say why in the commit.
--out keeps the report; --report checks an existing report instead of running gradflow (e.g. one written by
`gradflow run examples/claims/*.json --out-dir results`).
Exit codes: 0 pass, 1 a check failed (or gradflow failed), 2 bad usage, a missing gradflow, an unreadable file,
or a path the report does not have (a renamed field fails too).
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

# The one tolerance of the reduced claims runs, relative. The runs are deterministic (fixed seeds, the report the
# same at any thread count), so on one machine they reproduce bit for bit; the tolerance only absorbs what differs
# between machines: OpenBLAS picks its kernels by CPU, which reorders sums and moves results by a few ulps. Measured
# on a Zen CPU, every expected value rerun with OPENBLAS_CORETYPE=Haswell, Sandybridge and Prescott (generic SSE3):
# worst relative difference 9.5e-14 (train_c6_pre_upper, bottom/top after 20 steps at lr 0.1; the initialization
# specs at most 6e-14). 1e-9 leaves four orders of margin and still fails on any change of a model, an init, a seed
# or a formula, which moves these numbers by far more (a 1 % larger init scale in c4_depth_profile: 2e-4 to 2e-3).
REL_TOL = 1e-9


class UsageError(Exception):
    pass


class NullValue(UsageError):
    """A path that exists but holds null where a number is needed: a failed check, not a usage error."""


def parse_selector(seg):
    m = re.fullmatch(r"([^\[\]]*)\[([^\[\]]+)\]", seg)
    if not m:
        return seg, None
    conds = []
    for part in m.group(2).split(","):
        if "=" not in part:
            raise UsageError(f"selector '{seg}': '{part}' is not key=value")
        k, v = part.split("=", 1)
        conds.append((k.strip(), v.strip()))
    return m.group(1), conds


def matches(elem, conds):
    if not isinstance(elem, dict):
        return False
    for k, v in conds:
        if k not in elem:
            return False
        x = elem[k]
        if isinstance(x, bool) or x is None:
            if json.dumps(x) != v:
                return False
        elif isinstance(x, (int, float)):
            try:
                if float(v) != float(x):
                    return False
            except ValueError:
                return False
        elif str(x) != v:
            return False
    return True


def resolve_all(report, path, allow_null=False, many=False):
    """Every value `path` addresses, in order. many=True (inside max/min): '*' segments fan out over every element
    and a selector may match several elements; else each selector must match exactly one."""
    nodes = [report]
    walked = []
    for seg in path.split("/"):
        key, conds = parse_selector(seg)
        nxt = []
        for node in nodes:
            if key == "*":
                if not many:
                    raise UsageError(f"{path}: a path with '*' needs max(...) or min(...)")
                if isinstance(node, list):
                    nxt.extend(node)
                elif isinstance(node, dict):
                    nxt.extend(node.values())
                else:
                    raise UsageError(f"{path}: '*' at '{'/'.join(walked)}' is not a list or object")
                continue
            if key:
                if isinstance(node, list):
                    try:
                        node = node[int(key)]
                    except (ValueError, IndexError):
                        raise UsageError(f"{path}: no element '{key}' in the list at '{'/'.join(walked)}'")
                elif isinstance(node, dict) and key in node:
                    node = node[key]
                else:
                    raise UsageError(f"{path}: no key '{key}' at '{'/'.join(walked) or '(top)'}'")
            if conds is not None:
                if not isinstance(node, list):
                    raise UsageError(f"{path}: '{seg}' selects from something that is not a list")
                found = [e for e in node if matches(e, conds)]
                if many and found:
                    nxt.extend(found)
                    continue
                if len(found) != 1:
                    raise UsageError(f"{path}: '{seg}' matches {len(found)} elements, not exactly one")
                node = found[0]
            nxt.append(node)
        nodes = nxt
        walked.append(seg)
    if not nodes:
        raise UsageError(f"{path}: addresses nothing")
    for node in nodes:
        if node is None and allow_null:
            continue
        if node is None:
            raise NullValue(f"{path} is null")
        if isinstance(node, bool) or not isinstance(node, (int, float)):
            raise UsageError(f"{path}: is {json.dumps(node)[:80]}, not a number")
    return [None if n is None else float(n) for n in nodes]


def resolve(report, path, allow_null=False):
    return resolve_all(report, path, allow_null)[0]


def split_args(text):
    """'a[x=1,y=2], b' -> ['a[x=1,y=2]', 'b']: commas outside brackets and parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


FUNCTIONS = {"abs": (1, abs), "inv": (1, lambda a: 1.0 / a), "sq": (1, lambda a: a * a), "div": (2, lambda a, b: a / b)}


def operand(report, text, allow_null=False):
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    m = re.fullmatch(r"(abs|inv|sq|div|max|min)\((.+)\)", text)
    if m:
        name, inner = m.group(1), m.group(2)
        if name in ("max", "min"):
            values = resolve_all(report, inner, many=True)
            return max(values) if name == "max" else min(values)
        arity, fn = FUNCTIONS[name]
        args = split_args(inner)
        if len(args) != arity:
            raise UsageError(f"'{text}': {name} takes {arity} operand(s)")
        return fn(*(operand(report, a) for a in args))
    return resolve(report, text, allow_null)


OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
       "==": lambda a, b: a == b}


def check_finding(report, check):
    m = re.fullmatch(r"(.+?)\s+(<=|>=|==|<|>)\s+(.+)", check.strip())
    if not m:
        raise UsageError(f"check '{check}' is not '<operand> <op> <operand>'")
    try:
        a, b = operand(report, m.group(1)), operand(report, m.group(3))
    except NullValue as e:
        return False, f"null ({e})", "-"
    return OPS[m.group(2)](a, b), f"{a:.6g}", f"{b:.6g}"


def printed_tolerance(text):
    """Half a unit in the last printed digit of a decimal string: '0.733' -> 5e-4, '6.4e-5' -> 5e-7, '12' -> 0.5."""
    m = re.fullmatch(r"[-+]?(\d+)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", text.strip())
    if not m:
        raise UsageError(f"full-size value '{text}' is not a printed decimal number")
    decimals = len(m.group(2) or "")
    exponent = int(m.group(3) or 0)
    return 0.5 * 10.0 ** (exponent - decimals)


def reprint(value, printed):
    """`value` with as many significant digits as the decimal string `printed` has ("0.733" -> 3, "6.4e-5" -> 2)."""
    if printed is None:
        return f"{value:.3g}"
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", printed.strip())
    if not m:
        raise UsageError(f"full-size value '{printed}' is not a printed decimal number")
    sig = max(1, len(((m.group(1) or "") + (m.group(2) or "")).lstrip("0")))
    return f"{value:.{sig}g}"


def run_spec(gradflow, spec, reduced, out, env):
    cmd = [gradflow, "run", spec, "-q", "--json", out]
    if reduced:
        cmd.insert(3, "--reduced")
    if os.path.exists(out):
        os.remove(out)  # never read a report left by an earlier run
    print("$ " + " ".join([f"{k}={v}" for k, v in env.items()] + cmd), flush=True)
    r = subprocess.run(cmd, env=dict(os.environ, **env))
    if r.returncode != 0:
        print(f"FAIL: gradflow exited with {r.returncode}")
        sys.exit(1)
    with open(out) as f:
        return json.load(f)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    update = "--update" in argv
    opts = {}
    for name in ("--out", "--report"):
        if name in argv:
            i = argv.index(name)
            if i + 1 >= len(argv):
                raise UsageError(f"{name} needs a file")
            opts[name] = argv[i + 1]
            args.remove(argv[i + 1])
    if len(args) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    gradflow, spec, expected_path = args
    if not os.access(gradflow, os.X_OK):
        raise UsageError(f"{gradflow} is not an executable (build gradflow first)")
    with open(expected_path) as f:
        expected = json.load(f)
    full = expected.get("run") == "full"
    if expected.get("run") not in ("reduced", "full"):
        raise UsageError(f"{expected_path}: \"run\" must be \"reduced\" or \"full\"")
    if os.path.basename(spec) != expected.get("spec"):
        raise UsageError(f"{expected_path} is for spec {expected.get('spec')}, not {os.path.basename(spec)}")
    if update and full and "--report" not in opts:
        raise UsageError("--update of a full-size file needs --report (the report docs/findings.md is regenerated from)")

    if "--report" in opts:
        with open(opts["--report"]) as f:
            report = json.load(f)
        print(f"checking {opts['--report']} (not rerun)")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = opts.get("--out") or os.path.join(tmp, "report.json")
            report = run_spec(gradflow, spec, not full, out, expected.get("env", {}))

    failures = 0
    values = expected.get("values", {})
    if update:
        for path in values:
            if full:  # the printed string, to the significant digits it had (null stays null when the report agrees)
                got = operand(report, path, allow_null=True)
                values[path] = None if got is None else reprint(got, values[path])
            else:
                values[path] = operand(report, path)
        if report.get("verdicts"):
            expected["verdicts"] = {v["says"]: v["verdict"] for v in report["verdicts"]}
        with open(expected_path, "w") as f:
            json.dump(expected, f, indent=1)
            f.write("\n")
        print(f"updated {len(values)} values in {expected_path}")
    for path, want in values.items():
        if full and want is None:
            got = operand(report, path, allow_null=True)
            ok = got is None
            detail = f"measured {got}, findings.md: none (null)"
        elif full:
            got = operand(report, path, allow_null=True)
            tol = printed_tolerance(want) * (1 + 1e-9)
            ok = got is not None and abs(got - float(want)) <= tol
            detail = f"measured {'null' if got is None else f'{got:.6g}'}, findings.md prints {want} (rounding tolerance {tol:.1g})"
        else:
            got = operand(report, path)
            if want is None:
                raise UsageError(f"{path}: no expected value (fill it in with --update)")
            ok = got == want if want == 0 else abs(got - want) <= REL_TOL * abs(want)
            rel = abs(got - want) / abs(want) if want else abs(got)
            detail = f"measured {got!r}, expected {want!r} (relative difference {rel:.1e}, REL_TOL {REL_TOL:g})"
        if not ok:
            failures += 1
        print(f"{'ok  ' if ok else 'FAIL'} {path}: {detail}")
    for finding in expected.get("findings", []):
        ok, a, b = check_finding(report, finding["check"])
        if not ok:
            failures += 1
        print(f"{'ok  ' if ok else 'FAIL'} finding: {finding['says']}\n       {finding['check']}  ({a} vs {b})")
    decided = {v["says"]: v for v in report.get("verdicts", [])}
    want_verdicts = expected.get("verdicts", {})
    for says, want in want_verdicts.items():
        got = decided.get(says)
        if got is None:
            raise UsageError(f"verdict '{says}': the report decides no such statement")
        ok = got["verdict"] == want
        if not ok:
            failures += 1
        print(f"{'ok  ' if ok else 'FAIL'} verdict: {says}: {got['verdict']} (expected {want}); {got['by']} "
              f"{got['estimate']} [{got['ci_low']}, {got['ci_high']}] vs {got['reference']} at {got['level']}, n = {got['n']}")
    for says in decided:
        if says not in want_verdicts:
            failures += 1
            print(f"FAIL verdict: {says}: decided by the report ({decided[says]['verdict']}) but not in {expected_path}")
    if expected.get("not_shown"):
        print(f"note: not shown at this size: {expected['not_shown']}")
    n = len(values) + len(expected.get("findings", [])) + len(want_verdicts) + \
        sum(1 for says in decided if says not in want_verdicts)
    if n == 0:
        print("FAIL: the expected file checks nothing")
        return 1
    print(f"{n - failures} of {n} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (UsageError, OSError, json.JSONDecodeError) as e:
        print(f"ERROR: {e}")
        sys.exit(2)
