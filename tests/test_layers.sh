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
mkdir -p "$tmp"/src/{base,engine,proto,stats,load,flow,scenarios,cli} "$tmp"/bench_app
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
w src/load/up.h '#include "flow/flow.h"'                  # bad: flow runs on load
w src/flow/ok.c '#include "load/request.h"'
w src/proto/h2_more.c '#include "proto/h2_internal.h"'     # h2's own
w src/proto/other.c '#include "proto/h2_internal.h"'       # bad: not h2's
out=$(bash "$check" "$tmp" 2>&1)
rc=$?
fail=0
[ $rc -eq 1 ] || { echo "FAIL: exit $rc for a tree with 6 bad includes"; fail=1; }
for want in src/base/up.c:1 src/stats/sideways.h:1 src/cli/main.c:1 bench_app/up.c:1 \
    src/load/up.h:1 src/proto/other.c:1; do
    grep -q "^$want: " <<<"$out" || { echo "FAIL: $want not reported"; fail=1; }
done
n=$(grep -c ' may not include ' <<<"$out")
[ "$n" -eq 5 ] || { echo "FAIL: $n layer violations reported, want 5"; fail=1; }
n=$(grep -c "_internal.h is " <<<"$out")
[ "$n" -eq 1 ] || { echo "FAIL: $n internal-header violations reported, want 1"; fail=1; }
if [ $fail -ne 0 ]; then
    echo "$out"
    exit 1
fi
echo "layers: this tree passes; 6 planted violations are each reported"
