#!/usr/bin/env bash
# Client user-space instructions per keep-alive GET, plain and TLS, counted
# by valgrind's callgrind: unlike CPU time, a count does not move with the
# machine's load. N requests over CONNS connections (so the handshakes
# weigh little) against two bench_apps serving /_health (plain and TLS,
# CPU 1), or nginx with SERVER=nginx (bench/lib.sh, start_tls_pair), for
# each "label=path" binary in HAMMERS.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMERS=${HAMMERS:-hammer=${HAMMER:-build/bin/hammer}}
N=${N:-20000}
CONNS=${CONNS:-10}
command -v valgrind >/dev/null || { echo "missing valgrind" >&2; exit 1; }
dir=$(mktemp -d)
start_tls_pair "$dir" "$(bench_port)" "${SERVER:-bench_app}"
count() { # binary url -> instructions per request
    valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$1" -q --no-server-watch -t 1 \
        -c "$CONNS" -n "$N" --timeout 60s --cacert "$dir/cert/ca.pem" --url "$2" scenario get \
        >/dev/null 2>"$dir/vg" || true
    awk -v n="$N" '/Collected :/ { printf "%.0f", $NF / n }' "$dir/vg"
}
read -r -a bins <<<"$HAMMERS"
printf "%-10s %12s %12s %8s\n" binary "http instr" "https instr" "https/http"
for b in "${bins[@]}"; do
    h=$(count "${b#*=}" "http://127.0.0.1:$p$path")
    s=$(count "${b#*=}" "https://127.0.0.1:$((p + 1))$path")
    awk -v l="${b%%=*}" -v h="$h" -v s="$s" 'BEGIN { printf "%-10s %12d %12d %8.3f\n", l, h, s, s / h }'
done
