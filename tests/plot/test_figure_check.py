"""test_figure_check.py — figure_check.py catches what it is for: gnuplot scripts drawn with each fault on purpose
(small text, a label off the canvas, a legend sample off the canvas, two labels on one spot, two rotated labels
on one another, a label clipped away,
two series drawn alike, one title in two styles) must each be reported, and the same scripts without the fault must pass. Without this, a
check that cannot fail would pass every figure.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import figure_check

HEAD = """set terminal {term} size 3.5in,2.5in font 'serif,9' fontscale 0.75
set output '{out}'
set linetype 1 lc rgb '#0072B2' lw 1.5 pt 7 ps 0.55 dt 1
set linetype 2 lc rgb '#D55E00' lw 1.5 pt 5 ps 0.55 dt 2
set xlabel 'layer'
set ylabel 'gradient'
"""
CLEAN = "plot x with lines lt 1 title 'post', 2*x with lines lt 2 title 'pre'\n"
FAULTS = {
    "text 5.3 pt < 7": "set label 1 'tiny' at graph 0.5,0.5 font ',5.3'\n" + CLEAN,
    "outside the": "set label 1 'far right of the canvas' at screen 0.9,0.5\n" + CLEAN,
    "labels overlap": "set label 1 'one label' at graph 0.3,0.5\nset label 2 'one label' at graph 0.32,0.51\n" + CLEAN,
    "is not drawn": "set label 1 'clipped' at screen 1.5,0.5\n" + CLEAN,
    "left unnamed": "set xtics ('0.5' 0.5, '' 1, '2' 2)\n" + CLEAN,
    "share colour, marker and dash": "plot x with lines lt 1 title 'post', 2*x with lines lt 1 title 'pre'\n",
    # the legend's samples pushed past the right edge, its text still on the canvas (issue 38: samples cut off)
    "of drawn lines or markers outside or on the edge": "set key at screen 1.06,0.9\n" + CLEAN,
    # two rotated tic labels on top of each other (upright labels are checked by their boxes; these by geometry)
    "slanted labels overlap": "set xtics rotate by 45 right ('Sandwich-LN' 1, 'NormFormer' 1.2, 'Post-LN' 5)\n" + CLEAN,
}


def problems_of(body, d: Path, ext):
    fig = d / f"f.{ext}"
    script = d / f"f.{ext}.gp"
    term = "pdfcairo enhanced" if ext == "pdf" else "svg enhanced"
    head = HEAD.format(term=term, out=fig.name)
    if ext == "svg":
        head = head.replace("size 3.5in,2.5in", "size 252,180").replace(" fontscale 0.75", "")
    script.write_text(head + body)
    subprocess.run(["gnuplot", script.name], cwd=d, check=True, capture_output=True)
    return figure_check.problems(fig, script)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for ext in ("pdf", "svg"):
            clean = problems_of(CLEAN, d, ext)
            if clean:
                failures.append(f"{ext}: a clean figure was reported: {clean}")
            for expect, body in FAULTS.items():
                found = problems_of(body, d, ext)
                if not any(expect in p for p in found):
                    failures.append(f"{ext}: the fault {expect!r} was not reported (got {found})")
        # one title drawn two ways in two panels of one figure
        two = ("set multiplot layout 1,2\nplot x with lines lt 1 title 'post'\n"
               "plot x with lines lt 2 title 'post'\nunset multiplot\n")
        found = problems_of(two, d, "pdf")
        if not any("drawn in 2 styles" in p for p in found):
            failures.append(f"one title in two styles was not reported (got {found})")
    for f in failures:
        print(f)
    print(f"test_figure_check: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
