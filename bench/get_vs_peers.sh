#!/usr/bin/env bash
# hammer scenario get vs wrk vs h2load --h1 against nginx (13-byte body).
# Client pinned to CPU 0, nginx (one worker) to CPU 1; 200 connections, one
# client thread, DURATION seconds each, tools interleaved (the order rotates
# each round), ROUNDS rounds. Prints requests/s and client CPU µs per
# request (user+sys from /usr/bin/time), median and range per tool.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNS=${CONNS:-200}
for t in nginx wrk h2load /usr/bin/time taskset; do
    command -v "$t" >/dev/null || { echo "missing $t: HAMMER_DEPS_EXTRA=1 sh scripts/deps.sh" >&2; exit 1; }
done
dir=$(mktemp -d)
trap 'kill $(cat "$dir/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(bench_port)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 8192; }
http {
    access_log off;
    keepalive_requests 100000000;
    server {
        listen 127.0.0.1:$port;
        location / { return 200 "Hello, world!"; }
    }
}
CONF
taskset -c 1 nginx -c "$dir/nginx.conf" -p "$dir"
sleep 0.5
url="http://127.0.0.1:$port/"
results="$dir/results.txt"

run_tool() { # tool -> appends "tool rps cpu_us_per_req"
    local tool=$1 out="$dir/out.txt" reqs rps
    case $tool in
    hammer)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            "$HAMMER" -q -t 1 -c "$CONNS" -d "${DURATION}s" --url "$url" --json "$dir/h.json" scenario get >"$out" 2>&1 || true
        reqs=$(grep -o '"sent": [0-9]*' "$dir/h.json" | grep -o '[0-9]*$')
        rps=$(grep -o '"throughput_rps": [0-9.e+]*' "$dir/h.json" | awk '{print $2}')
        ;;
    wrk)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            wrk -t1 -c "$CONNS" -d "${DURATION}s" "$url" >"$out" 2>&1
        reqs=$(awk '/requests in/ {print $1}' "$out")
        rps=$(awk '/Requests\/sec/ {print $2}' "$out")
        ;;
    h2load)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            h2load --h1 -t1 -c "$CONNS" -D "$DURATION" "$url" >"$out" 2>&1
        reqs=$(awk '/^requests:/ {print $2}' "$out")
        rps=$(awk '/^finished in/ {gsub(",",""); print $4}' "$out")
        ;;
    esac
    read -r u s <"$dir/time"
    awk -v t="$tool" -v r="$rps" -v u="$u" -v s="$s" -v n="$reqs" \
        'BEGIN { printf "%s %.0f %.3f\n", t, r, (u + s) * 1e6 / n }' >>"$results"
    tail -1 "$results"
}

tools=(hammer wrk h2load)
for ((r = 0; r < ROUNDS; r++)); do
    for ((i = 0; i < 3; i++)); do run_tool "${tools[(i + r) % 3]}"; done
done
echo
echo "tool     req/s median (range)       client CPU us/req median (range)"
for t in "${tools[@]}"; do
    printf "%-8s %-26s %s\n" "$t" "$(awk -v t="$t" '$1 == t {print $2}' "$results" | stat)" \
        "$(awk -v t="$t" '$1 == t {print $3}' "$results" | stat)"
done
