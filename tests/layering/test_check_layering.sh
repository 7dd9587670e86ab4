#!/bin/sh
# test_check_layering.sh CHECKER — the layering check fails on each kind of violation and passes a clean tree.
set -u
checker=${1:?usage: test_check_layering.sh CHECK_LAYERING_PY}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
tree() {  # a tree with folders core < model, and the file set given
  rm -rf "$tmp/r" && mkdir -p "$tmp/r/docs" "$tmp/r/src/core" "$tmp/r/src/model/placements" \
    "$tmp/r/include/gradflow/core" "$tmp/r/include/gradflow/model" "$tmp/r/analyses"
  printf '%s\n' '<!-- layering:begin -->' '| folder | may include |' '|---|---|' '| `core` | — |' \
    '| `model` | `core` (remark: `nothing`) |' '| `analyses` | `core`, `model` |' '<!-- layering:end -->' \
    > "$tmp/r/docs/architecture.md"
  echo '#include "gradflow/core/types.hpp"' > "$tmp/r/src/model/model.cpp"
  echo '#include "gradflow/model/model.hpp"' > "$tmp/r/src/model/placements/post.cpp"
  echo '#include "helper.hpp"' > "$tmp/r/src/core/types.cpp"
  echo '#include <vector>' > "$tmp/r/include/gradflow/core/types.hpp"
  echo '#include "gradflow/core/types.hpp"' > "$tmp/r/include/gradflow/model/model.hpp"
  echo '#include "gradflow/model/model.hpp"' > "$tmp/r/analyses/a.cpp"
}
expect() {  # expect RC WHAT: run the checker on the tree
  /usr/bin/python3 "$checker" "$tmp/r" > "$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$1" ]; then echo "FAIL: $2: exit $rc, expected $1"; cat "$tmp/out"; fail=1; else echo "ok: $2"; fi
}
tree; expect 0 "a clean tree"
tree; echo '#include "gradflow/model/model.hpp"' >> "$tmp/r/src/core/types.cpp"; expect 1 "an upward include (core -> model)"
tree; echo '#include "gradflow/nowhere/x.hpp"' >> "$tmp/r/include/gradflow/model/model.hpp"
expect 1 "an include of a folder without a row"
tree; echo '#include "model/private.hpp"' >> "$tmp/r/include/gradflow/model/model.hpp"; expect 1 "a public header including a private one"
tree; mkdir -p "$tmp/r/src/newarea"; echo '' > "$tmp/r/src/newarea/x.cpp"; expect 1 "a new folder without a row"
tree; sed -i 's/| `core` | — |/| `core` | `nowhere` |/' "$tmp/r/docs/architecture.md"; expect 2 "a row allowing a folder without a row"
tree; echo '#include "gradflow/core/types.hpp"' > "$tmp/r/src/model/placements/pre.cpp"; expect 0 "a subfolder inherits its parent's row"
exit $fail
