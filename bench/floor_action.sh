#!/usr/bin/env bash
# The hammer model's CPU per action beside the floor of the same exchange:
# bench_floor sends bench_app the very action hammer sends (POST
# /_action/increment with the session's cookie and via_ctx), as the least
# client work one keep-alive action can cost, and hammer runs the counter
# scenario (with its SSE observer). floor-sse is the floor with its
# observer: one more connection holds the page's SSE stream and finds the
# patched value in each read (bench/floor.c), the least an observer can
# cost; hammer is compared with it. bench_app's CPU per action is measured
# over each run too, so the table says how low hammer / bench_app can go
# at all: no client goes below the floor. hammer (one thread) and the floor
# on CPU 0, bench_app on CPU 1; ROUNDS rounds, the order rotating. A fourth
# variant, hammer-no-sse (--observers 0), is compared with the plain floor.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
FLOOR=${FLOOR:-build/bin/bench_floor}
APP=${APP:-build/bin/bench_app}
ROUNDS=${ROUNDS:-5}
N=${N:-200000}
DURATION=${DURATION:-3}
CONNS=${CONNS:-200}
dir=$(mktemp -d)
port=$(bench_port)
start_app_cpu1 "$APP" "$port" "$dir"

run() { # tool round -> appends "tool round client_us bench_app_us"
    local a0 a1 n
    a0=$(ticks)
    if [ "$1" = floor ] || [ "$1" = floor-sse ]; then
        # A session and the requests hammer would send for it (a page of
        # its own: a context shows its signals on its first stream only).
        via_requests "$port" "$dir"
        local sse_args=()
        [ "$1" = floor-sse ] && sse_args=("@$dir/sse.req" "$FLOOR_SIGNAL")
        a0=$(ticks)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            "$FLOOR" "127.0.0.1:$port" "$CONNS" "$DURATION" "@$dir/action.req" "${sse_args[@]}" >"$dir/out"
        n=$(awk '/^requests / {print $2 + 1}' "$dir/out") # and the first action
        awk '/^increment / && $2 != $4 { print "floor-sse read " $2 " of " $4 " patches" > "/dev/stderr" }' "$dir/out"
    else
        # hammer-no-sse: the same senders without the SSE observer, so the
        # difference to hammer is what reading the patches costs.
        local obs=1
        [ "$1" = hammer-no-sse ] && obs=0
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" "$HAMMER" -q -t 1 -c "$CONNS" -n "$N" \
            --observers "$obs" --url "http://127.0.0.1:$port" --json "$dir/r.json" \
            scenario counter >/dev/null 2>&1 || true
        n=$N
    fi
    a1=$(ticks)
    read -r u s < <(tail -1 "$dir/time") # after "Command exited with non-zero status" when it did
    awk -v t="$1" -v r="$2" -v u="$u" -v s="$s" -v n="$n" -v at=$((a1 - a0)) -v hz="$hz" \
        'BEGIN { printf "%s %d %.3f %.3f\n", t, r, (u + s) * 1e6 / n, at / hz * 1e6 / n }' >>"$dir/res"
    tail -1 "$dir/res"
}
tools=(floor floor-sse hammer hammer-no-sse)
for ((r = 0; r < ROUNDS; r++)); do
    for ((k = 0; k < 4; k++)); do run "${tools[$(((r + k) % 4))]}" "$r"; done
done
echo "median (range) over $ROUNDS rounds, -c $CONNS; ratios per round"
for t in "${tools[@]}"; do
    echo "  $t: client CPU us/action $(awk -v t=$t '$1 == t {print $3}' "$dir/res" | stat)," \
        "bench_app CPU us/action $(awk -v t=$t '$1 == t {print $4}' "$dir/res" | stat)," \
        "client / bench_app $(awk -v t=$t '$1 == t && $4 > 0 {printf "%.3f\n", $3 / $4}' "$dir/res" | stat)"
done
ratio() { # tool floor-variant
    echo "  $1 / $2: $(awk -v t="$1" -v f="$2" '$1 == f { b[$2] = $3 } $1 == t { h[$2] = $3 }
        END { for (r in h) if (b[r] > 0) printf "%.3f\n", h[r] / b[r] }' "$dir/res" | stat)"
}
ratio hammer floor-sse
ratio hammer floor
ratio hammer-no-sse floor
