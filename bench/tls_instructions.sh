#!/usr/bin/env bash
# Client user-space instructions per keep-alive GET, plain and TLS, counted
# by valgrind's callgrind: unlike CPU time, a count does not move with the
# machine's load. N requests of /_health over CONNS connections (so the
# handshakes weigh little) against two bench_apps (plain and TLS, CPU 1),
# for each "label=path" binary in HAMMERS.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMERS=${HAMMERS:-hammer=${HAMMER:-build/bin/hammer}}
APP=${APP:-build/bin/bench_app}
N=${N:-20000}
CONNS=${CONNS:-10}
command -v valgrind >/dev/null || { echo "missing valgrind" >&2; exit 1; }
dir=$(mktemp -d)
sh scripts/gen-test-cert.sh "$dir/cert" >/dev/null
p=$(bench_port)
taskset -c 1 "$APP" --port "$p" --quiet &
a1=$!
taskset -c 1 "$APP" --port "$((p + 1))" --quiet --tls-cert "$dir/cert/server.pem" \
    --tls-key "$dir/cert/server.key" &
a2=$!
trap 'kill $a1 $a2 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_port "$p"
wait_port "$((p + 1))"
count() { # binary url -> instructions per request
    valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$1" -q --no-server-watch -t 1 \
        -c "$CONNS" -n "$N" --timeout 60s --cacert "$dir/cert/ca.pem" --url "$2" scenario get \
        >/dev/null 2>"$dir/vg" || true
    awk -v n="$N" '/Collected :/ { printf "%.0f", $NF / n }' "$dir/vg"
}
read -r -a bins <<<"$HAMMERS"
printf "%-10s %12s %12s %8s\n" binary "http instr" "https instr" "https/http"
for b in "${bins[@]}"; do
    h=$(count "${b#*=}" "http://127.0.0.1:$p/_health")
    s=$(count "${b#*=}" "https://127.0.0.1:$((p + 1))/_health")
    awk -v l="${b%%=*}" -v h="$h" -v s="$s" 'BEGIN { printf "%-10s %12d %12d %8.3f\n", l, h, s, s / h }'
done
