#!/usr/bin/env bash
# Client CPU per keep-alive GET: the floor (bench_floor: the least client
# work, see bench/floor.c), hammer `get` on io_uring and on epoll, wrk and
# h2load --h1, against nginx (one worker, 13-byte body). Client pinned to
# CPU 0, nginx to CPU 1, one client thread, DURATION seconds each; the tools
# are interleaved (the order rotates each round), ROUNDS rounds, for each
# connection count in CONNS_LIST.
#
# Prints, per tool: requests/s and client CPU µs per request (user+sys from
# /usr/bin/time), median (range); and the multiple of the floor, as the
# median (range) of per-round ratios (each tool's CPU per request over the
# floor's in the same round), since a shared machine moves absolute figures
# by ±30% between rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
FLOOR=${FLOOR:-build/bin/bench_floor}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
CONNS_LIST=${CONNS_LIST:-"200 1000"}
TOOLS=${TOOLS:-"floor hammer hammer-epoll wrk h2load"}
for t in nginx wrk h2load /usr/bin/time taskset; do
    command -v "$t" >/dev/null || { echo "missing $t: HAMMER_DEPS_EXTRA=1 sh scripts/deps.sh" >&2; exit 1; }
done
dir=$(mktemp -d)
port=$(bench_port)
start_nginx "$dir" "$port"
url="http://127.0.0.1:$port/"
results="$dir/results.txt"

run_tool() { # tool conns round -> appends "conns round tool rps cpu_us_per_req"
    local tool=$1 conns=$2 round=$3 out="$dir/out.txt" reqs rps
    case $tool in
    floor)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            "$FLOOR" "127.0.0.1:$port" "$conns" "$DURATION" >"$out" 2>&1
        reqs=$(awk '/^requests / {print $2}' "$out")
        rps=$(awk '/^requests_per_s/ {print $2}' "$out")
        ;;
    hammer | hammer-epoll)
        local engine=io_uring
        [ "$tool" = hammer-epoll ] && engine=epoll
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            "$HAMMER" -q --no-server-watch -t 1 -c "$conns" -d "${DURATION}s" --engine "$engine" --url "$url" \
            --json "$dir/h.json" scenario get >"$out" 2>&1 || true
        reqs=$(grep -o '"sent": [0-9]*' "$dir/h.json" | head -1 | grep -o '[0-9]*$')
        rps=$(grep -o '"throughput_rps": [0-9.e+]*' "$dir/h.json" | awk '{print $2}')
        ;;
    wrk)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            wrk -t1 -c "$conns" -d "${DURATION}s" "$url" >"$out" 2>&1
        reqs=$(awk '/requests in/ {print $1}' "$out")
        rps=$(awk '/Requests\/sec/ {print $2}' "$out")
        ;;
    h2load)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            h2load --h1 -t1 -c "$conns" -D "$DURATION" "$url" >"$out" 2>&1
        reqs=$(awk '/^requests:/ {print $2}' "$out")
        rps=$(awk '/^finished in/ {gsub(",",""); print $4}' "$out")
        ;;
    esac
    read -r u s <"$dir/time"
    awk -v c="$conns" -v r="$round" -v t="$tool" -v p="$rps" -v u="$u" -v s="$s" -v n="$reqs" \
        'BEGIN { printf "%s %s %s %.0f %.3f\n", c, r, t, p, (u + s) * 1e6 / n }' >>"$results"
    tail -1 "$results"
}

read -r -a tools <<<"$TOOLS"
nt=${#tools[@]}
for conns in $CONNS_LIST; do
    for ((r = 0; r < ROUNDS; r++)); do
        for ((i = 0; i < nt; i++)); do run_tool "${tools[(i + r) % nt]}" "$conns" "$r"; done
    done
done
echo
echo "median (range) over $ROUNDS rounds of ${DURATION}s; x floor = per-round ratio of CPU per request"
for conns in $CONNS_LIST; do
    echo "-c $conns"
    printf "  %-13s %-24s %-24s %s\n" tool "req/s" "CPU us/req" "x floor"
    for t in "${tools[@]}"; do
        ratios=$(awk -v c="$conns" -v t="$t" '$1 == c && $3 == "floor" { f[$2] = $5 }
                 $1 == c && $3 == t { v[$2] = $5 }
                 END { for (r in v) if (f[r] > 0) printf "%.3f\n", v[r] / f[r] }' "$results" | stat)
        printf "  %-13s %-24s %-24s %s\n" "$t" \
            "$(awk -v c="$conns" -v t="$t" '$1 == c && $3 == t {print $4}' "$results" | stat)" \
            "$(awk -v c="$conns" -v t="$t" '$1 == c && $3 == t {print $5}' "$results" | stat)" \
            "$ratios"
    done
done
