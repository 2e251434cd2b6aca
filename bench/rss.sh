#!/usr/bin/env bash
# Memory per connection and per virtual user (peak RSS from /usr/bin/time).
#  1. get at 1000 and CONNS keep-alive connections against nginx: hammer on
#     both engines, wrk, h2load.
#  2. browser VUs holding an open SSE stream (one action each, then a long
#     think) at 1000 and VUS virtual users against bench_app, both engines.
# Reported: peak RSS / connections, and the marginal cost between the two
# sizes (what one more connection or VU costs; the fixed part drops out).
# Peak RSS does not depend on the machine's load, so one run is enough.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
APP=${APP:-build/bin/bench_app}
CONNS=${CONNS:-8000}
VUS=${VUS:-5000}
dir=$(mktemp -d)
port=$(bench_port)
start_nginx "$dir" "$port"
trap 'kill $(cat "$dir/nginx.pid") 2>/dev/null || true; kill $app 2>/dev/null || true; rm -rf "$dir"' EXIT
app=
sleep 0.5
url="http://127.0.0.1:$port/"
peak() { /usr/bin/time -f "%M" -o "$dir/rss" "$@" >"$dir/out" 2>&1 || true; cat "$dir/rss" | tail -1; }

echo "== get, peak RSS in KiB at N keep-alive connections (one client thread)"
for n in 1000 "$CONNS"; do
    h=$(peak "$HAMMER" -q --no-server-watch -t 1 -c "$n" -d 5s --timeout 20s --engine io_uring --url "$url" scenario get)
    e=$(peak "$HAMMER" -q --no-server-watch -t 1 -c "$n" -d 5s --timeout 20s --engine epoll --url "$url" scenario get)
    w=$(peak wrk -t1 -c "$n" -d5s "$url")
    g=$(peak h2load --h1 -t1 -c "$n" -D 5 "$url")
    echo "$n $h $e $w $g" >>"$dir/get"
    awk -v n="$n" -v h="$h" -v e="$e" -v w="$w" -v g="$g" 'BEGIN {
        printf "  %6d conns: hammer io_uring %7d KiB (%.2f KiB/conn)  epoll %7d (%.2f)  wrk %7d (%.2f)  h2load %7d (%.2f)\n",
               n, h, h / n, e, e / n, w, w / n, g, g / n }'
done
awk 'NR == 1 { n1 = $1; h1 = $2; e1 = $3; w1 = $4; g1 = $5 } NR == 2 {
    d = $1 - n1
    printf "  marginal per connection: hammer io_uring %.2f KiB, epoll %.2f KiB, wrk %.2f KiB, h2load %.2f KiB\n",
           ($2 - h1) / d, ($3 - e1) / d, ($4 - w1) / d, ($5 - g1) / d }' "$dir/get"

echo "== browser VUs holding an open SSE stream, peak RSS of hammer"
aport=$((port + 1))
"$APP" --port "$aport" --quiet &
app=$!
sleep 0.3
for n in 1000 "$VUS"; do
    r=$(peak "$HAMMER" -q -t 1 --engine io_uring --mode browser -c "$n" -n "$n" --think 3s \
        --timeout 30s --url "http://127.0.0.1:$aport" scenario counter)
    e=$(peak "$HAMMER" -q -t 1 --engine epoll --mode browser -c "$n" -n "$n" --think 3s \
        --timeout 30s --url "http://127.0.0.1:$aport" scenario counter)
    echo "$n $r $e" >>"$dir/vu"
    awk -v n="$n" -v r="$r" -v e="$e" 'BEGIN {
        printf "  %6d VUs: io_uring %8d KiB (%.2f KiB/VU)  epoll %8d KiB (%.2f)\n", n, r, r / n, e, e / n }'
done
awk 'NR == 1 { n1 = $1; r1 = $2; e1 = $3 } NR == 2 {
    printf "  marginal per VU: io_uring %.2f KiB, epoll %.2f KiB\n", ($2 - r1) / ($1 - n1), ($3 - e1) / ($1 - n1) }' "$dir/vu"
