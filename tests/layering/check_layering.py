#!/usr/bin/python3
"""check_layering.py — every #include "…" of src/, include/gradflow/ and analyses/ obeys docs/architecture.md's table.

Usage: check_layering.py REPO_ROOT      (exit 0: every include allowed; 1: the violations, one per line; 2: bad table)

The table (docs/architecture.md, section "Layering", between the markers `<!-- layering:begin -->` and
`<!-- layering:end -->`) has one row per folder: | `folder` | `a`, `b`, ... | (or — for none), remarks in parentheses. A folder is an area
of the code: `core` is include/gradflow/core/ and src/core/ together; a subfolder with a row of its own
(`backend/cuda`) is apart from its parent; one without (src/model/placements/) belongs to its parent. The rules:
1. a file of folder F includes only headers of F or of the folders F's row allows;
2. a public header (include/gradflow/) includes only public headers: never one of src/;
3. every folder of src/, include/gradflow/ and analyses/ has a row (a new folder is placed in the table first).
An include resolves as the build resolves it: "gradflow/x/..." is folder x's public header; "x/..." with a folder
of src/ first is that folder's private header; a bare name is a header beside the including file.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$")
SOURCES = (".cpp", ".hpp", ".h", ".cu", ".cuh")


def read_table(doc):
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"<!-- layering:begin -->(.*?)<!-- layering:end -->", text, re.S)
    if not m:
        sys.exit(f"check_layering: {doc} has no layering table (markers <!-- layering:begin/end -->)")
    table = {}
    for line in m.group(1).splitlines():
        r = ROW.match(line.strip())
        if not r:
            continue
        allowed = set(re.findall(r"`([^`]+)`", re.sub(r"\(.*?\)", "", r.group(2))))  # not the remarks in (…)
        table[r.group(1)] = allowed
    if not table:
        sys.exit(f"check_layering: the layering table of {doc} has no rows")
    for f, allowed in table.items():
        unknown = allowed - set(table)
        if unknown:
            print(f"check_layering: row `{f}` allows {sorted(unknown)}, which have no row of their own", file=sys.stderr)
            sys.exit(2)
    return table


def folder_of(rel, table):
    """The table's folder of a file path relative to the root (None: not an area's file)."""
    parts = rel.split("/")
    if parts[0] == "analyses":
        return "analyses"
    if parts[0] == "include" and len(parts) > 3 and parts[1] == "gradflow":
        parts = parts[2:]
    elif parts[0] == "src" and len(parts) > 2:
        parts = parts[1:]
    else:
        return None
    dirs = parts[:-1]
    for k in range(len(dirs), 0, -1):  # the deepest folder with a row of its own
        name = "/".join(dirs[:k])
        if name in table:
            return name
    return "/".join(dirs)  # no row: rule 3 reports it


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    table = read_table(os.path.join(root, "docs", "architecture.md"))
    src_folders = {d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d))}
    problems, files = [], 0
    for top in ("src", os.path.join("include", "gradflow"), "analyses"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                here = folder_of(rel, table)
                if here is None:
                    continue
                files += 1
                if here not in table:
                    problems.append(f"{rel}: folder `{here}` has no row in docs/architecture.md's layering table")
                    continue
                public = rel.startswith("include/")
                for lineno, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    parts = inc.split("/")
                    if parts[0] == "gradflow" and len(parts) > 2:
                        target = folder_of("include/" + inc, table)
                    elif parts[0] in src_folders and len(parts) > 1:
                        if public:
                            problems.append(f"{rel}:{lineno}: public header includes the private \"{inc}\"")
                            continue
                        target = folder_of("src/" + inc, table)
                    else:
                        continue  # beside the including file: the same folder
                    if target != here and target not in table.get(here, set()):
                        problems.append(f"{rel}:{lineno}: `{here}` includes \"{inc}\" of `{target}`, which its row "
                                        f"does not allow")
    for p in problems:
        print(p)
    print(f"check_layering: {files} files, {len(table)} folders, {len(problems)} include(s) against the table")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
