#!/usr/bin/env bash
# A php-via scenario against bench_app: actions/s, hammer's client CPU per
# action and bench_app's CPU per action, measured over the same interval,
# and their ratio per round (median and range: the ratio moves much less
# than either figure on a shared machine). hammer (one thread) on CPU 0,
# bench_app on CPU 1; ROUNDS rounds of N actions.
#
# MODE=hammer (default): -c CONNS actions in flight. MODE=browser: -c CONNS
# virtual users, each loading the page, holding its SSE stream and clicking
# (no think time), so CPU per action also carries the page loads, the
# streams and the patches; bench_app paces each VU by its SSE poll.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
APP=${APP:-build/bin/bench_app}
ROUNDS=${ROUNDS:-5}
N=${N:-200000}
CONNS=${CONNS:-200}
SCENARIO=${SCENARIO:-counter}
MODE=${MODE:-hammer}
ENGINE=${ENGINE:-io_uring}
dir=$(mktemp -d)
port=$(bench_port)
start_app_cpu1 "$APP" "$port" "$dir"
for ((r = 0; r < ROUNDS; r++)); do
    a0=$(ticks)
    taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" "$HAMMER" -q -t 1 -c "$CONNS" -n "$N" \
        --mode "$MODE" --engine "$ENGINE" --url "http://127.0.0.1:$port" --json "$dir/r.json" \
        scenario "$SCENARIO" || true
    a1=$(ticks)
    read -r u s <"$dir/time"
    ok=$(grep -o '"ok": [0-9]*' "$dir/r.json" | head -1 | grep -o '[0-9]*$')
    rps=$(grep -o '"throughput_rps": [0-9.e+]*' "$dir/r.json" | awk '{print $2}')
    awk -v rps="$rps" -v u="$u" -v s="$s" -v n="$N" -v ok="$ok" -v at=$((a1 - a0)) -v hz="$hz" \
        'BEGIN { h = (u + s) * 1e6 / n; b = at / hz * 1e6 / n
                 printf "%.0f %.2f %.2f %d %.3f\n", rps, h, b, ok, (b > 0 ? h / b : 0) }' >>"$dir/res"
    tail -1 "$dir/res"
done
echo "scenario $SCENARIO, mode $MODE, $ENGINE: median (range) over $ROUNDS rounds of $N actions, -c $CONNS"
echo "  actions/s                   $(awk '{print $1}' "$dir/res" | stat)"
echo "  hammer CPU us/action        $(awk '{print $2}' "$dir/res" | stat)"
echo "  bench_app CPU us/action     $(awk '{print $3}' "$dir/res" | stat)"
echo "  hammer / bench_app (round)  $(awk '{print $5}' "$dir/res" | stat)"
