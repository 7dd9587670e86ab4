"""figure_check.py — what a reviewer checks by eye on a figure, checked by machine (issue 38, part 2).

For a rendered figure (PDF; SVG through rsvg-convert to PDF, both drawn by cairo) and the gnuplot script beside it:
  text_sizes      every text run's size in points, from the PDF's text operators (Tf size x Tm scale), not
                  from word boxes (a box is about 1.55 x the size, and rotated text swaps its sides)
  text_lines      the text lines and their boxes (`pdftotext -bbox-layout`, poppler-utils): one per label, an
                  enhanced-text subscript inside its label's line
  problems(...)   the list of what is wrong: text under MIN_TEXT_PT, a label outside the canvas, two labels
                  overlapping, two series of one panel drawn alike, one legend title drawn two ways
Each check returns readable lines ("text 5.3 pt < 7 pt: '10'"); an empty list is a pass.
"""
import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

MIN_TEXT_PT = 7.0      # the floor: no text in a vector figure smaller than 7 pt
CANVAS_SLACK_PT = 0.5  # a box may touch the canvas edge by rounding
EDGE_PT = 0.75         # a drawing this close to the canvas edge was cut there
OVERLAP_PT = 0.6       # two labels' boxes may share a sliver this thick (glyph boxes include side bearings)


def pdf_of(figure: Path, workdir: Path) -> Path:
    """The figure as a PDF: itself, or an SVG converted by rsvg-convert (librsvg2-bin)."""
    if figure.suffix == ".pdf":
        return figure
    out = workdir / (figure.name + ".pdf")
    # at 72 dpi one SVG unit (gnuplot writes the canvas in points) is one PDF point; rsvg-convert's default is 96
    subprocess.run(["rsvg-convert", "-f", "pdf", "--dpi-x", "72", "--dpi-y", "72", "-o", str(out), str(figure)],
                   check=True)
    return out


def _streams(pdf: bytes):
    for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S):
        try:
            yield zlib.decompress(m.group(1)).decode("latin1")
        except zlib.error:
            yield m.group(1).decode("latin1")


_NUM = r"(-?[\d.]+)"
_TM = re.compile(" ".join([_NUM] * 6) + r" Tm")
_TF = re.compile(r"/\S+ " + _NUM + r" Tf")
_CM = re.compile(" ".join([_NUM] * 6) + r" cm")
_TJ = re.compile(r"\((.*?)\)\s*Tj|\[(.*?)\]\s*TJ")


def _mul(m, n):
    """The PDF matrix product m x n of [a b c d e f] matrices (row vectors: apply m, then n)."""
    a, b, c, d, e, f = m
    A, B, C, D, E, F = n
    return [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F]


def text_runs(pdf_path: Path):
    """[(size_pt, text, x, y, angle_deg)] for every shown string: its size (the font size times the scale of its
    text matrix and of the current transformation), where it starts on the page (points from the top left, as
    pdftotext gives boxes) and its direction. cairo writes `BT s 0 0 -s x y Tm /f 1 Tf (text) Tj ET`, rotated text
    with a rotated matrix; rsvg-convert adds `cm` scales."""
    import math
    data = pdf_path.read_bytes()
    m = re.search(rb"/MediaBox\s*\[\s*[-\d.]+\s+[-\d.]+\s+[-\d.]+\s+([-\d.]+)", data)
    page_h = float(m.group(1)) if m else 0.0
    out = []
    for s in _streams(data):
        if " Tf" not in s:
            continue
        ctm = [[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]]  # per q/Q level
        for tok in re.finditer(r"(" + " ".join([_NUM] * 6) + r" cm)|(\bq\b)|(\bQ\b)|BT(.*?)ET", s, re.S):
            if tok.group(1):
                ctm[-1] = _mul([float(tok.group(i)) for i in range(2, 8)], ctm[-1])
            elif tok.group(8):
                ctm.append(list(ctm[-1]))
            elif tok.group(9):
                if len(ctm) > 1:
                    ctm.pop()
            else:
                size, tm = 0.0, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]  # the text state inside BT ... ET, in order
                for op in re.finditer(_TM.pattern + "|" + _TF.pattern + "|" + _TJ.pattern, tok.group(10), re.S):
                    if op.group(6) is not None:
                        tm = [float(op.group(i)) for i in range(1, 7)]
                    elif op.group(7) is not None:
                        size = float(op.group(7))
                    else:
                        full = _mul(tm, ctm[-1])
                        scale = abs(full[0] * full[3] - full[1] * full[2]) ** 0.5
                        angle = math.degrees(math.atan2(full[1], full[0])) % 360
                        out.append((size * scale, op.group(8) or op.group(9) or "", full[4], page_h - full[5],
                                    angle))
    return out


def text_sizes(pdf_path: Path):
    """[(size_pt, text)] of text_runs."""
    return [(size, text) for size, text, *_ in text_runs(pdf_path)]


def _slanted(runs):
    """The shown strings at an angle other than 0, 90, 180 or 270 degrees (tic labels rotated by 30): pdftotext
    reads those a glyph at a time into lines of mixed letters, so their boxes say nothing about overlaps."""
    return [r for r in runs if min(abs(r[4] - a) for a in (0, 90, 180, 270, 360)) > 1]


def _near_slanted(box, slanted):
    """Whether a pdftotext line lies on one of the slanted strings (within a character of its baseline)."""
    import math
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    for size, text, x, y, angle in slanted:
        length = 0.6 * size * max(len(text), 1)
        dx, dy = math.cos(math.radians(angle)), -math.sin(math.radians(angle))  # page y grows downwards
        t = max(0.0, min(length, (cx - x) * dx + (cy - y) * dy))
        if math.hypot(cx - (x + t * dx), cy - (y + t * dy)) <= size:
            return True
    return False


def slanted_overlaps(runs):
    """Pairs of slanted strings (rotated tic labels) that run into each other: parallel, closer than their text is
    tall, and sharing a stretch along their direction (each about 0.45 em a glyph, from where it starts)."""
    import math
    out = []
    slanted = _slanted(runs)
    for i in range(len(slanted)):
        for j in range(i + 1, len(slanted)):
            (s1, t1, x1, y1, a1), (s2, t2, x2, y2, a2) = slanted[i], slanted[j]
            if abs(a1 - a2) > 1:
                continue
            ux, uy = math.cos(math.radians(a1)), -math.sin(math.radians(a1))  # along the text (page y down)
            apart = abs((x2 - x1) * -uy + (y2 - y1) * ux)  # between the two baselines
            n1, n2 = (len(re.sub(r"\\(.)", r"\1", t)) for t in (t1, t2))
            b1, b2 = x1 * ux + y1 * uy, x2 * ux + y2 * uy
            shared = min(b1 + 0.45 * s1 * n1, b2 + 0.45 * s2 * n2) - max(b1, b2)
            if apart < 0.8 * min(s1, s2) and shared > 1.0:
                out.append((t1, t2))
    return out


def text_lines(pdf_path: Path):
    """(page_width, page_height, [(xmin, ymin, xmax, ymax, text)]) from pdftotext -bbox-layout."""
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(pdf_path), "-"], check=True, capture_output=True).stdout
    root = ET.fromstring(re.sub(rb'xmlns="[^"]+"', b"", xml, count=1))
    page = root.find(".//page")
    w, h = float(page.get("width")), float(page.get("height"))
    lines = []
    for line in page.iter("line"):
        words = [x.text or "" for x in line.iter("word")]
        box = tuple(float(line.get(k)) for k in ("xMin", "yMin", "xMax", "yMax"))
        lines.append((*box, " ".join(words)))
    return w, h, lines


def _overlap(a, b):
    dx = min(a[2], b[2]) - max(a[0], b[0])
    dy = min(a[3], b[3]) - max(a[1], b[1])
    return min(dx, dy)


def layout_problems(figure: Path, workdir: Path):
    pdf = pdf_of(figure, workdir)
    problems = []
    small = sorted({(round(s, 1), t) for s, t in text_sizes(pdf) if s < MIN_TEXT_PT and t.strip()})
    problems += [f"text {s} pt < {MIN_TEXT_PT:g} pt: {t!r}" for s, t in small[:5]]
    if len(small) > 5:
        problems.append(f"... and {len(small) - 5} more runs of small text")
    w, h, lines = text_lines(pdf)
    slanted = _slanted(text_runs(pdf))
    for x0, y0, x1, y1, t in lines:
        if x0 < -CANVAS_SLACK_PT or y0 < -CANVAS_SLACK_PT or x1 > w + CANVAS_SLACK_PT or y1 > h + CANVAS_SLACK_PT:
            problems.append(f"label {t!r} outside the {w:g} x {h:g} pt canvas: [{x0:.1f}, {y0:.1f}, {x1:.1f}, {y1:.1f}]")
    problems += drawing_problems(pdf, w, h)
    for a, b in slanted_overlaps(text_runs(pdf))[:3]:
        problems.append(f"slanted labels overlap: {a!r} and {b!r} (glyph codes as the PDF holds them)")
    upright = [ln for ln in lines if not _near_slanted(ln, slanted)]
    for i in range(len(upright)):
        for j in range(i + 1, len(upright)):
            if _overlap(upright[i], upright[j]) > OVERLAP_PT:
                problems.append(f"labels overlap: {upright[i][4]!r} and {upright[j][4]!r}")
    return problems


_TOKEN = re.compile(r"\((?:\\.|[^\\)])*\)|\[[^\]]*\]|<[^>]*>|/[^\s/\[\]()<>]+|[-+]?(?:\d+\.?\d*|\.\d+)|[A-Za-z'\"*]+")


def drawing_points(pdf_path: Path):
    """Every point a path passes through (m, l, c and the corners of re), on the page, in points from the top left,
    of the paths that are drawn (stroked or filled; clipping paths left out), with the current transformation
    (q/Q/cm) applied: legend samples and markers included, which text boxes do not show."""
    data = pdf_path.read_bytes()
    m = re.search(rb"/MediaBox\s*\[\s*[-\d.]+\s+[-\d.]+\s+([-\d.]+)\s+([-\d.]+)", data)
    page_w, page_h = (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)
    out = []
    for s in _streams(data):
        if sum(c < " " and c not in "\n\r\t" or c > "~" for c in s) > len(s) // 50:
            continue  # a font or an image, not a content stream
        ctm = [[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]]
        stack, path, in_text = [], [], False

        def put(x, y):
            t = ctm[-1]
            path.append((x * t[0] + y * t[2] + t[4], page_h - (x * t[1] + y * t[3] + t[5])))

        for tok in _TOKEN.findall(s):
            if tok[0] in "-+.0123456789":
                stack.append(float(tok))
                continue
            if tok[0] in "([</":
                stack.append(tok)
                continue
            nums = [v for v in stack if isinstance(v, float)]
            if tok == "BT":
                in_text = True
            elif tok == "ET":
                in_text = False
            elif in_text:
                pass
            elif tok == "q":
                ctm.append(list(ctm[-1]))
            elif tok == "Q":
                if len(ctm) > 1:
                    ctm.pop()
            elif tok == "cm" and len(nums) >= 6:
                ctm[-1] = _mul(nums[-6:], ctm[-1])
            elif tok in ("m", "l") and len(nums) >= 2:
                put(*nums[-2:])
            elif tok == "c" and len(nums) >= 6:
                for i in (0, 2, 4):
                    put(*nums[-6 + i:len(nums) - 4 + i])
            elif tok in ("v", "y") and len(nums) >= 4:
                put(*nums[-4:-2]), put(*nums[-2:])
            elif tok == "re" and len(nums) >= 4:
                x, y, w, h = nums[-4:]
                corners = [(x, y), (x + w, y), (x, y + h), (x + w, y + h)]
                before = len(path)
                for px, py in corners:
                    put(px, py)
                xs, ys = [p[0] for p in path[before:]], [p[1] for p in path[before:]]
                if min(xs) <= 0.5 and min(ys) <= 0.5 and max(xs) >= page_w - 0.5 and max(ys) >= page_h - 0.5:
                    del path[before:]  # the page's background, not a drawing
            elif tok in ("S", "s", "f", "F", "f*", "B", "B*", "b", "b*"):
                out += path
                path = []
            elif tok in ("n", "W", "W*"):  # a clipping path (W n) or one ended unpainted
                if tok == "n":
                    path = []
            stack = []
    return out


def drawing_problems(pdf_path: Path, w: float, h: float):
    """Paths drawn outside the canvas or up to its very edge (a legend sample cut at the right, a marker off the
    page): the vector terminals clip a drawing at the canvas edge (pdfcairo) or leave it past it (svg), and nothing
    of a figure with margins ends exactly there."""
    edge = EDGE_PT
    outside = [(x, y) for x, y in drawing_points(pdf_path)
               if x < edge or y < edge or x > w - edge or y > h - edge]
    if not outside:
        return []
    x, y = max(outside, key=lambda p: max(-p[0], -p[1], p[0] - w, p[1] - h))
    return [f"{len(outside)} point(s) of drawn lines or markers outside or on the edge of the {w:g} x {h:g} pt "
            f"canvas, e.g. at ({x:.1f}, {y:.1f}) (a legend sample cut off?)"]


# ---- series styles, from the script ------------------------------------------------------------------------------

_LT_DEF = re.compile(r"^set linetype (\d+) lc rgb '(#[0-9A-Fa-f]{6})' .*?pt (\d+) .*?dt (\S+)", re.M)


def _plot_commands(script: str):
    """Each `plot` command of the script as its list of clauses (continuation lines joined)."""
    joined = re.sub(r"\\\n", " ", script)
    for line in joined.splitlines():
        if line.startswith("plot "):
            yield [c.strip() for c in re.split(r",\s+(?=data |keyentry|NaN|'|\d|[-+]?\d)", line[5:])]


def _style(clause: str, linetypes):
    lt = re.search(r"\blt (\d+)", clause)
    colour = re.search(r"lc rgb '([^']+)'", clause)
    pt = re.search(r"\bpt (\d+)", clause)
    dt = re.search(r"\bdt (\([^)]*\)|\d+)", clause)
    base = linetypes.get(int(lt.group(1)), ("?", "?", "?")) if lt else ("?", "?", "?")
    return (colour.group(1) if colour else base[0], pt.group(1) if pt else base[1], dt.group(1) if dt else base[2])


def style_problems(script_path: Path):
    """Two line series of one plot command drawn with the same colour, marker and dash; one legend title drawn
    with two different styles anywhere in the figure."""
    script = script_path.read_text()
    linetypes = {int(m.group(1)): (m.group(2).upper(), m.group(3), m.group(4)) for m in _LT_DEF.finditer(script)}
    problems, by_title = [], {}
    for clauses in _plot_commands(script):
        seen = {}  # (points only?, style) -> the series drawn so: its data block, else its legend title
        for c in clauses:
            if not re.search(r"with (lines|linespoints|points)\b", c) or "lc rgb '#ffffff'" in c:
                continue
            style = _style(c, linetypes)
            title = re.search(r"title '((?:[^']|'')*)'", c)
            index = re.search(r"\bindex (\d+)", c)
            ident = f"data block {index.group(1)}" if index else f"legend entry {title.group(1) if title else c[:30]!r}"
            if re.search(r"with lines\b", c):
                style = (style[0], "-", style[2])  # a line has no marker
            if "with points" in c:
                style = (style[0], style[1], "-")  # points have no dash
            key = (c.startswith("keyentry"), style)  # legend samples against each other, data against data
            if key in seen and seen[key] != ident:
                problems.append(f"{seen[key]} and {ident} share colour, marker and dash {style}")
            seen.setdefault(key, ident)
            if title and title.group(1).strip():
                by_title.setdefault(title.group(1), set()).add(style)
    for t, styles in by_title.items():
        if len(styles) > 1:
            problems.append(f"{t!r} is drawn in {len(styles)} styles: {sorted(styles)}")
    return problems


# ---- every label the script sets is drawn ------------------------------------------------------------------------

_QUOTED = r"'((?:[^']|'')*)'"


def script_labels(script: str):
    """The texts the script asks gnuplot to draw: axis labels, titles, explicit tic labels, legend titles, labels."""
    out = []
    joined = re.sub(r"\\\n", " ", script)
    key = True  # whether plot titles reach a legend
    for line in joined.splitlines():
        if line.startswith("reset") or line.startswith("set key"):
            key = True
        if line.startswith("unset key"):
            key = False
        m = re.match(r"set (x|y|x2|y2|cb)label " + _QUOTED, line)
        if m:
            out.append((f"{m.group(1)}label", m.group(2), "noenhanced" not in line))
        if line.startswith("set title "):
            for piece in re.findall(_QUOTED, line[len("set title "):]):
                out.append(("title", piece, "noenhanced" not in line))
        m = re.match(r"set (x|y|cb)tics \((.*)\)", line)
        if m and "rotate" not in line:  # (pdftotext reads text at 30 degrees a glyph at a time)
            for piece in re.findall(_QUOTED + r" [-+0-9.eE]+", m.group(2)):
                out.append((f"{m.group(1)} tic", piece, "noenhanced" not in line))
        m = re.match(r"set label \d+ " + _QUOTED, line)
        if m:
            out.append(("label", m.group(1), "noenhanced" not in line))
        if key and (line.startswith("plot ") or line.startswith("  ")):
            for clause in re.split(r",\s+(?=data |keyentry)", line):
                t = re.search(r"\btitle " + _QUOTED, clause)
                if t and t.group(1).strip():
                    out.append(("legend", t.group(1), "noenhanced" not in clause))
    return [(what, text.replace("''", "'"), enhanced) for what, text, enhanced in out]


def _flat(text: str, enhanced: bool):
    if enhanced:
        text = re.sub(r"\{/[^ }]* ?", "", text)  # {/:Italic x}, {/*0.8 x}: the font switch
        text = re.sub(r"[{}_^@&~\\]", "", text)
    return re.sub(r"\s+", "", text.replace("\u2212", "-"))


def missing_labels(pdf_path: Path, script_path: Path):
    """Each label of the script that the figure does not show (clipped off the canvas, or dropped by gnuplot)."""
    _, _, lines = text_lines(pdf_path)
    drawn = _flat("".join(t for *_, t in lines), False)
    out = []
    for what, text, enhanced in script_labels(script_path.read_text()):
        # word by word: pdftotext may interleave a long label's words with the tic labels beside it; a word of one
        # or two letters (a subscript split off its symbol) is not looked for, unless it is the whole label
        words = [w for w in (_flat(w, enhanced) for w in text.split()) if w]
        if len(words) > 1:
            words = [w for w in words if len(w) >= 3]
        if any(w not in drawn for w in words):
            out.append(f"{what} {text!r} is not drawn")
    return out


def dropped_tics(script_path: Path):
    """An axis of ten or fewer explicit tics with some left unnamed: the reader looks for the value the text
    discusses (λ = 1) and finds a bare tic."""
    out = []
    for line in re.sub(r"\\\n", " ", script_path.read_text()).splitlines():
        m = re.match(r"set (x|y|cb)tics \((.*)\)", line)
        if not m:
            continue
        names = [t.replace("''", "'") for t in re.findall(_QUOTED + r" [-+0-9.eE]+", m.group(2))]
        if len(names) <= 10 and any(not n for n in names) and any(n for n in names):
            out.append(f"{m.group(1)} tics: {names.count('')} of {len(names)} left unnamed ({names})")
    return out


def problems(figure: Path, script: Path):
    with tempfile.TemporaryDirectory() as d:
        return (layout_problems(figure, Path(d)) + missing_labels(pdf_of(figure, Path(d)), script) +
                dropped_tics(script) + style_problems(script))


if __name__ == "__main__":  # figure_check.py FIGURE.pdf|svg [...]: each figure beside its FIGURE.gp; exit 1 on a problem
    import sys
    bad = 0
    for arg in sys.argv[1:]:
        for p in problems(Path(arg), Path(arg + ".gp")):
            print(f"{arg}: {p}")
            bad += 1
    sys.exit(1 if bad else 0)
