#!/usr/bin/env bash
# The layer check (scripts/check-layers.sh): this tree passes it, and a
# tree with a lower layer including a higher one fails it, naming each
# such include and nothing else.
#   test_layers.sh SOURCE_DIR
set -uo pipefail
src=$1
check="$src/scripts/check-layers.sh"

out=$(bash "$check" "$src" 2>&1)
if [ $? -ne 0 ]; then
    echo "FAIL: this tree breaks the layers:"
    echo "$out"
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/src/{base,engine,proto,stats,scenarios,cli} "$tmp"/bench_app
w() { printf '%s\n' "$2" >"$tmp/$1"; }
w src/base/up.c '#include "engine/engine.h"'               # bad: base is the bottom
w src/engine/ok.c '#include "base/hm_base.h"'
w src/stats/sideways.h '#include "proto/http_client.h"'    # bad: stats is a leaf over base
w src/stats/ok.c '#include "stats/hdr.h"
#include <jansson.h>'
w src/scenarios/ok.c '#include "hammer/scenario.h"
#include "stats/results.h"'
w src/cli/main.c '#include "bench_app/app.h"'              # bad: only embedded.c may
w src/cli/embedded.c '#include "bench_app/app.h"'
w bench_app/up.c '  #  include "scenarios/scenario.h"'     # bad: bench_app is below scenarios
out=$(bash "$check" "$tmp" 2>&1)
rc=$?
fail=0
[ $rc -eq 1 ] || { echo "FAIL: exit $rc for a tree with 4 bad includes"; fail=1; }
for want in src/base/up.c:1 src/stats/sideways.h:1 src/cli/main.c:1 bench_app/up.c:1; do
    grep -q "^$want: " <<<"$out" || { echo "FAIL: $want not reported"; fail=1; }
done
n=$(grep -c ' may not include ' <<<"$out")
[ "$n" -eq 4 ] || { echo "FAIL: $n violations reported, want 4"; fail=1; }
if [ $fail -ne 0 ]; then
    echo "$out"
    exit 1
fi
echo "layers: this tree passes; 4 planted violations are each reported"
