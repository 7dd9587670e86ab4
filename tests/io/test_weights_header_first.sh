#!/bin/sh
# test_weights_header_first.sh GRADFLOW — a --weights file is judged by its header before its data is read
# (issue 13 item 9). Two sparse 2 GiB files in this test's own temporary folder, one with a garbage header and
# one with a valid header whose tensors do not tile the data section, are each refused with the header's own
# error while gradflow runs under a 1 GiB address-space limit (ulimit -v): reading the file whole first (the old
# reader) cannot even allocate it and fails with "does not fit in memory" instead. Exit 77 when the limit or a
# sparse file cannot be set up here.
set -u
G=$1
if [ "${GRADFLOW_SANITIZED:-0}" = 1 ]; then  # AddressSanitizer's shadow memory cannot run under ulimit -v
  echo "SKIPPED: a sanitized build cannot run under an address-space limit"; exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/gradflow_header_first.XXXXXX") || exit 77
trap 'rm -rf "$dir"' EXIT
fail=0

# $1 file, $2 header text: the 8-byte little-endian header length, the header, then a sparse tail to 2 GiB.
make_file() {
  n=$(printf '%s' "$2" | wc -c)
  printf "$(printf '\\%03o\\%03o\\%03o\\%03o\\000\\000\\000\\000' $((n % 256)) $((n / 256 % 256)) $((n / 65536 % 256)) $((n / 16777216)))" >"$1"
  printf '%s' "$2" >>"$1"
  truncate -s 2G "$1" 2>/dev/null || { echo "SKIPPED: cannot make a sparse 2 GiB file"; exit 77; }
}

# $1 label, $2 file, $3 text the error must contain
expect() {
  out=$( (ulimit -v 1048576 2>/dev/null || exit 77
          OMP_NUM_THREADS=1 exec timeout 120 "$G" analyze --weights "$2" --heads 2 -q --json "$dir/r.json") 2>&1)
  rc=$?
  if [ $rc -eq 77 ]; then echo "SKIPPED: ulimit -v is not available"; exit 77; fi
  case "$out" in
    *"$3"*) if [ $rc -eq 2 ]; then echo "ok   $1: exit 2: $out"; return; fi ;;
  esac
  echo "FAIL $1: exit $rc (want 2 and '$3'): $out"
  fail=1
}

make_file "$dir/garbage.safetensors" "this is not a safetensors header at all, just text"
expect "garbage header" "$dir/garbage.safetensors" "header does not start with '{'"

make_file "$dir/untiled.safetensors" '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
expect "valid header, 2 GiB of untiled data" "$dir/untiled.safetensors" "trailing bytes after the last tensor"

exit $fail
