#!/bin/sh
# install-deps.sh — installs gradflow's build, test and figure dependencies from Debian packages
# (nothing is downloaded at build time). Safe to rerun: apt-get installs only what is missing.
# slurm-wlm and munge: the cluster/slurm test starts a single-node Slurm of its own (tests/cluster, docs/cluster.md);
# the packages' own services are not used. pybind11-dev, python3-pybind11, python3-dev: the Python module
# (import gradflow, docs/python.md); python3-pandas: its to_pandas(). poppler-utils (pdftotext) and librsvg2-bin
# (rsvg-convert): the figure test reads text sizes and positions back from the PDF and SVG figures
# (tests/plot/test_figure_layout.py).
set -e
PKGS="cmake g++ make libeigen3-dev libcli11-dev nlohmann-json3-dev catch2 libopenblas-openmp-dev libspectra-dev \
gnuplot-nox python3-torch python3-numpy python3-matplotlib slurm-wlm munge pybind11-dev python3-pybind11 python3-dev \
python3-pandas poppler-utils librsvg2-bin"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "install-deps: all packages present"; exit 0; }
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "install-deps: installing$missing"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y $missing
