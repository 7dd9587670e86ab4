# figure_check.sh — sourced by the examples/make_*figure*.sh scripts: `checked_plot OUT.png ARGS...` draws the
# figure as the PNG the docs show and, beside it in the same folder, as a PDF that tests/plot/figure_check.py
# measures (text of 7 pt and more, nothing off the canvas or missing, no overlapping labels, no two series alike):
# the docs' figures pass the check the figure test applies to every kind. Needs $gf (the gradflow binary).
checked_plot() {
  local png=$1
  shift
  "$gf" plot "$@" -o "$png"
  "$gf" plot "$@" -o "${png%.png}.pdf" 2> /dev/null
  /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../tests/plot/figure_check.py" "${png%.png}.pdf" ||
    { echo "figure_check: ${png%.png}.pdf has the problems above" >&2; return 1; }
}
