#!/bin/sh
# gpu-build.sh — build the CUDA backend for the lent H200 and collect what the device needs into .gpu/ (git-ignored,
# carried by the device tool: `carry: [".gpu"]`, < 64 MiB). The device has CUDA (cuBLAS, cuSOLVER: its own, found by
# scripts/gpu-check.sh) but none of our Debian libraries, so .gpu/ holds the stripped programs, linked with
# libstdc++/libgcc statically (the device's glibc may be older than Debian's libstdc++ needs), and the shared
# libraries they need that are neither glibc nor CUDA (OpenBLAS, libgfortran, libquadmath, libgomp; ldd lists them).
# Usage: scripts/gpu-build.sh [build-dir]   (default build-gpu; docs/cuda.md)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
LAUNCHER=""
command -v ccache > /dev/null && LAUNCHER="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DGRADFLOW_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" $LAUNCHER
cmake --build "$B" -j2 --target gradflow test_backend
rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib
for p in "$B/gradflow" "$B/tests/test_backend"; do
  strip -o ".gpu/bin/$(basename "$p")" "$p"
done
# the non-glibc, non-CUDA shared libraries the programs need (ldd resolves them on this machine)
for p in .gpu/bin/*; do ldd "$p"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libgcc_s.so*|libcu*|libnv*) ;;  # the system's / the device's
    *) cp -L "$lib" .gpu/lib/ ;;
  esac
done
# .gitignore lists /.gpu/ (the device tool carries it only when asked)
git rev-parse HEAD > .gpu/commit 2>/dev/null || true
du -sh .gpu .gpu/bin/* .gpu/lib/*
total=$(du -sk .gpu | cut -f1)
if [ "$total" -ge 65536 ]; then
  echo "gpu-build: .gpu/ is ${total} KiB, over the 64 MiB the device tool carries" >&2
  exit 1
fi
echo "gpu-build: .gpu/ ready (${total} KiB): run scripts/gpu-check.sh .gpu on the device with carry [\".gpu\"]"
