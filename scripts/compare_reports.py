#!/usr/bin/python3
"""compare_reports.py — are two gradflow reports (or two folders of them) the same, number for number?

Usage: compare_reports.py [--rtol R] A B   A, B: two .json reports, or two folders (every *.json, *.csv, *.npy,
                                           *.safetensors in A compared with the file of the same name in B)

"Bit for bit" as the project defines it: every numeric leaf of a JSON report is compared exactly (repr of the
float), timing and metadata excluded (keys naming times, threads, paths, dates, versions; docs/architecture.md).
Strings and booleans must match too, except those metadata keys. CSV files are compared cell by cell with the
same exclusions by column name; binary files byte for byte. Exit 0 when identical, 1 with a list otherwise.
With --rtol R, files that differ only in numbers, each within R relative (|a − b| <= R·max(|a|, |b|); .npy by
numpy), are listed with their largest relative difference and counted as agreeing (exit 0): the listing a change
that must reorder a sum gives (issue 31's "within 1e-13 where a product's shape changes, listed").
"""
import json
import os
import sys

# Keys whose values are metadata, not results: skipped. Words matched anywhere in a key; file paths by exact key.
METADATA_WORDS = ("time", "elapsed", "second", "date", "host", "thread", "version", "commit")
PATH_KEYS = {"json", "csv", "out", "out-dir", "out_dir", "resume", "spec_file", "spec-file", "path", "file",
             "weights", "input", "cotangent"}


def is_metadata(key):
    k = key.lower()
    return k in PATH_KEYS or any(w in k for w in METADATA_WORDS)


def leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            if is_metadata(k):
                continue
            yield from leaves(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, repr(x)


def relative_difference(x, y):
    """|x − y| / max(|x|, |y|) for two numbers written as text, or None when either is not a number."""
    try:
        a, b = float(x), float(y)
    except (TypeError, ValueError):
        return None
    if a == b or (a != a and b != b):
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def compare_json(a, b):
    with open(a) as f:
        A = dict(leaves(json.load(f)))
    with open(b) as f:
        B = dict(leaves(json.load(f)))
    out = []
    for k in sorted(set(A) | set(B)):
        if A.get(k) != B.get(k):
            out.append((f"{k}: {A.get(k, '<missing>')} vs {B.get(k, '<missing>')}",
                        relative_difference(A.get(k), B.get(k))))
    return out


def compare_csv(a, b):
    import csv
    with open(a) as f:
        A = list(csv.reader(f))
    with open(b) as f:
        B = list(csv.reader(f))
    if not A or not B or A[0] != B[0] or len(A) != len(B):
        return [f"header or row count differs ({len(A)} vs {len(B)} rows)"]
    keep = [i for i, h in enumerate(A[0]) if not is_metadata(h)]
    out = []
    for r in range(1, len(A)):
        if [A[r][i] for i in keep] == [B[r][i] for i in keep]:
            continue
        rel = [relative_difference(A[r][i], B[r][i]) for i in keep if A[r][i] != B[r][i]]
        out.append((f"row {r}: {A[r]} vs {B[r]}", None if None in rel else max(rel)))
    return out


def compare_file(a, b):
    if a.endswith(".json"):
        return compare_json(a, b)
    if a.endswith(".csv"):
        return compare_csv(a, b)
    with open(a, "rb") as f, open(b, "rb") as g:
        if f.read() == g.read():
            return []
    rel = None
    if a.endswith(".npy"):
        import numpy
        x, y = numpy.load(a), numpy.load(b)
        if x.shape == y.shape:
            scale = numpy.maximum(abs(x), abs(y))
            rel = float(numpy.max(numpy.where(scale > 0, abs(x - y) / numpy.where(scale > 0, scale, 1), 0)))
    return [("bytes differ", rel)]


def main():
    args = sys.argv[1:]
    rtol = None
    if len(args) == 4 and args[0] == "--rtol":
        rtol = float(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    a, b = args
    pairs = []
    if os.path.isdir(a):
        for name in sorted(os.listdir(a)):
            if name.endswith((".json", ".csv", ".npy", ".safetensors")):
                pairs.append((os.path.join(a, name), os.path.join(b, name)))
    else:
        pairs.append((a, b))
    bad = within = 0
    for x, y in pairs:
        if not os.path.exists(y):
            print(f"{y}: missing")
            bad += 1
            continue
        diffs = compare_file(x, y)
        if not diffs:
            continue
        rels = [r for _, r in diffs]
        if rtol is not None and None not in rels and max(rels) <= rtol:
            within += 1
            print(f"{os.path.basename(x)}: {len(diffs)} numbers differ, largest relative difference {max(rels):.2e}")
            continue
        bad += 1
        print(f"{os.path.basename(x)}: {len(diffs)} differences, e.g.")
        for d, _ in diffs[:5]:
            print("   ", d)
    same = len(pairs) - bad - within
    print(f"{same} of {len(pairs)} files identical" + (f", {within} within {rtol:g} relative" if rtol is not None else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
