#!/usr/bin/env bash
# User-space instructions per counter action, counted by valgrind's
# callgrind (reproducible on a busy machine, where CPU time is not): the
# floor of the action (bench_floor sending hammer's POST), the floor with
# its observer (one SSE stream read for the patched value), hammer mode and
# hammer mode with --observers 0. Each is run twice, short and long, and
# the figure is the difference of instructions over the difference of
# actions, so start-up and the report drop out. Kernel work (the loopback
# TCP both sides pay, most of a floor action's CPU) is not counted: these
# figures split hammer's own work, the CPU rounds of floor_action.sh give
# the ratio that includes the kernel.
#
# KEEP=dir keeps the callgrind files (callgrind_annotate them); VARIANTS
# picks some of the four (the ratios need all of them).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
FLOOR=${FLOOR:-build/bin/bench_floor}
APP=${APP:-build/bin/bench_app}
CONNS=${CONNS:-20}
N1=${N1:-2000}
N2=${N2:-12000}
D1=${D1:-1}
D2=${D2:-4}
dir=$(mktemp -d)
keep=${KEEP:-$dir}
mkdir -p "$keep"
port=$(bench_port)
start_app_cpu1 "$APP" "$port" "$dir"

ir() { awk '/^summary:/ {print $2}' "$1"; }
cg() { # out-file command... (its output in out-file.log)
    local out=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >"$out.log" 2>"$out.err" || true
}
floor() { # variant seconds -> "instructions actions"
    via_requests "$port" "$dir"
    local out="$keep/$1.$2.cg" sse_args=()
    [ "$1" = floor-sse ] && sse_args=("@$dir/sse.req" "$FLOOR_SIGNAL")
    cg "$out" "$FLOOR" "127.0.0.1:$port" "$CONNS" "$2" "@$dir/action.req" "${sse_args[@]}"
    if [ "$1" = floor-sse ]; then
        awk '/^increment / && $2 != $4 { print "floor-sse: increment " $2 " of " $4 " actions" > "/dev/stderr" }' "$out.log"
    fi
    echo "$(ir "$out") $(awk '/^requests / {print $2 + 1}' "$out.log")"
}
hammer() { # variant n -> "instructions actions"
    local out="$keep/$1.$2.cg" obs=1
    [ "$1" = hammer-no-sse ] && obs=0
    cg "$out" "$HAMMER" -q -t 1 -c "$CONNS" -n "$2" --observers "$obs" \
        --url "http://127.0.0.1:$port" --json "$out.json" scenario counter
    echo "$(ir "$out") $2"
}
VARIANTS=${VARIANTS:-floor floor-sse hammer hammer-no-sse}
declare -A per
for v in $VARIANTS; do
    case $v in
    floor*) read -r i1 a1 < <(floor "$v" "$D1"); read -r i2 a2 < <(floor "$v" "$D2") ;;
    *) read -r i1 a1 < <(hammer "$v" "$N1"); read -r i2 a2 < <(hammer "$v" "$N2") ;;
    esac
    per[$v]=$(awk -v i1="$i1" -v i2="$i2" -v a1="$a1" -v a2="$a2" 'BEGIN { printf "%.0f", (i2 - i1) / (a2 - a1) }')
    echo "$v: ${per[$v]} instructions per action ($a1 and $a2 actions, $i1 and $i2 instructions)"
done
[ ${#per[@]} = 4 ] || exit 0
echo "hammer / floor-sse: $(awk -v h="${per[hammer]}" -v f="${per[floor-sse]}" 'BEGIN { printf "%.2f", h / f }')," \
    "hammer-no-sse / floor: $(awk -v h="${per[hammer-no-sse]}" -v f="${per[floor]}" 'BEGIN { printf "%.2f", h / f }')," \
    "the observer: $((per[hammer] - per[hammer-no-sse])) in hammer, $((per[floor-sse] - per[floor])) in the floor"
