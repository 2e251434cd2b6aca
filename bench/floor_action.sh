#!/usr/bin/env bash
# The hammer model's CPU per action beside the floor of the same exchange:
# bench_floor sends bench_app the very action hammer sends (POST
# /_action/increment with the session's cookie and via_ctx), as the least
# client work one keep-alive action can cost, and hammer runs the counter
# scenario (with its SSE observer). bench_app's CPU per action is measured
# over each run too, so the table says how low hammer / bench_app can go
# at all: no client goes below the floor. hammer (one thread) and the floor
# on CPU 0, bench_app on CPU 1; ROUNDS rounds, the order alternating.
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
taskset -c 1 "$APP" --port "$port" --quiet &
app=$!
trap 'kill $app 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_port "$port"
ticks() { awk '{print $14 + $15}' "/proc/$app/stat"; }
hz=$(getconf CLK_TCK)

# A session and the action request hammer would send (its body carries the
# page's via_ctx as the page wrote it).
ctx=$(curl -s -c "$dir/jar" "http://127.0.0.1:$port/bench/counter" | grep -o '"via_ctx":"[^"]*"' | head -1)
sid=$(awk '$6 == "via_session_id" {print $7}' "$dir/jar")
body="{$ctx}"
printf 'POST /_action/increment HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nCookie: via_session_id=%s\r\nContent-Type: application/json\r\nDatastar-Request: true\r\nOrigin: http://127.0.0.1:%s\r\nContent-Length: %d\r\n\r\n%s' \
    "$port" "$sid" "$port" "${#body}" "$body" >"$dir/action.req"

run() { # tool -> appends "tool client_us bench_app_us"
    local a0 a1 n
    a0=$(ticks)
    if [ "$1" = floor ]; then
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            "$FLOOR" "127.0.0.1:$port" "$CONNS" "$DURATION" "@$dir/action.req" >"$dir/out"
        n=$(awk '/^requests / {print $2}' "$dir/out")
    else
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" "$HAMMER" -q -t 1 -c "$CONNS" -n "$N" \
            --url "http://127.0.0.1:$port" --json "$dir/r.json" scenario counter || true
        n=$N
    fi
    a1=$(ticks)
    read -r u s <"$dir/time"
    awk -v t="$1" -v u="$u" -v s="$s" -v n="$n" -v at=$((a1 - a0)) -v hz="$hz" \
        'BEGIN { printf "%s %.3f %.3f\n", t, (u + s) * 1e6 / n, at / hz * 1e6 / n }' >>"$dir/res"
    tail -1 "$dir/res"
}
for ((r = 0; r < ROUNDS; r++)); do
    if ((r % 2)); then run hammer; run floor; else run floor; run hammer; fi
done
echo "median (range) over $ROUNDS rounds, -c $CONNS; ratios per round"
for t in floor hammer; do
    echo "  $t: client CPU us/action $(awk -v t=$t '$1 == t {print $2}' "$dir/res" | stat)," \
        "bench_app CPU us/action $(awk -v t=$t '$1 == t {print $3}' "$dir/res" | stat)," \
        "client / bench_app $(awk -v t=$t '$1 == t && $3 > 0 {printf "%.3f\n", $2 / $3}' "$dir/res" | stat)"
done
echo "  hammer / floor: $(awk '$1 == "floor" { f[NR] = $2 } $1 == "hammer" { h[NR] = $2 }
    END { for (i in h) { j = (i % 2) ? i + 1 : i - 1; if (f[j] > 0) printf "%.3f\n", h[i] / f[j] } }' "$dir/res" | stat)"
