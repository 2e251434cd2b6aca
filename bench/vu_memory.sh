#!/usr/bin/env bash
# Where a browser VU's memory goes (issue 13's "≤ 8 KiB per VU" target).
# Runs browser VUs that hold an SSE stream (one action each, then a long
# think) at 1000 and VUS virtual users against bench_app, on both engines,
# and reports:
#   - the marginal peak RSS per VU between the two sizes (/usr/bin/time);
#   - the coroutine stack pages a VU touches: HAMMER_STACK_PROBE makes the
#     engine count, as each coroutine ends, the pages resident in its stack
#     (how deep it went) and print the average;
#   - the rest (heap: the VU's record and its two connection records, the
#     page, the SSE parser, signals, cookies; engine sockets), as the
#     difference.
# Then the same over TLS at 500 and TLS_VUS VUs (io_uring), with the
# default --tls-handshakes and with 0.
# Peak RSS does not depend on the machine's load, so one run is enough.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
APP=${APP:-build/bin/bench_app}
VUS=${VUS:-5000}
dir=$(mktemp -d)
port=$(bench_port)
ulimit -n 20000
start_app "$APP" "$port" "$dir"

# One run: prints "peak_kib stack_kib_per_coroutine coroutines".
run() {
    HAMMER_STACK_PROBE=1 /usr/bin/time -f "%M" -o "$dir/rss" "$HAMMER" -q -t 1 --engine "$1" \
        --mode browser -c "$2" -n "$2" --think 3s --timeout 30s \
        --url "http://127.0.0.1:$port" scenario counter >/dev/null 2>"$dir/err" || true
    # Each loop prints its own line (the VUs' thread, and the run's set-up
    # and finishing loops): their coroutines summed, the KiB averaged.
    local probe
    probe=$(sed -nE 's/.*stack probe: ([0-9]+) coroutines ended, ([0-9.]+) KiB.*/\1 \2/p' "$dir/err" |
        awk '{ n += $1; kib += $1 * $2 } END { if (n) printf "%.2f %d", kib / n, n }')
    [ -n "$probe" ] || { echo "no stack probe line from $HAMMER" >&2; cat "$dir/err" >&2; exit 1; }
    echo "$(tail -1 "$dir/rss") $probe"
}

echo "== browser VUs holding an open SSE stream (one client thread)"
for eng in io_uring epoll; do
    read -r r1 s1 c1 < <(run "$eng" 1000)
    read -r r2 s2 c2 < <(run "$eng" "$VUS")
    awk -v e="$eng" -v n1=1000 -v n2="$VUS" -v r1="$r1" -v r2="$r2" -v s2="$s2" -v c2="$c2" 'BEGIN {
        per = (r2 - r1) / (n2 - n1); cpv = c2 / n2; stack = s2 * cpv
        printf "  %-8s peak RSS %d KiB at %d VUs, %d KiB at %d: marginal %.1f KiB per VU\n", e, r1, n1, r2, n2, per
        printf "           stacks: %.2f coroutines per VU x %.1f KiB touched each = %.1f KiB per VU\n", cpv, s2, stack
        printf "           the rest (heap, sockets): %.1f KiB per VU\n", per - stack }'
done

# The same over TLS (io_uring): a second bench_app with a throwaway
# certificate; each VU's two connections hold OpenSSL's state. Run with
# the default --tls-handshakes and with 0 (every handshake at once).
TLS_VUS=${TLS_VUS:-2500}
sh scripts/gen-test-cert.sh "$dir/cert" >/dev/null
tport=$((port + 1))
"$APP" --port "$tport" --quiet --tls-cert "$dir/cert/server.pem" --tls-key "$dir/cert/server.key" &
tls_app=$!
trap "kill $app $tls_app 2>/dev/null || true; rm -rf '$dir'" EXIT
wait_port "$tport"
tls_run() { # VUS TLS_HANDSHAKES -> peak KiB
    /usr/bin/time -f "%M" -o "$dir/rss" "$HAMMER" -q -t 1 --mode browser -c "$1" -n "$1" \
        --think 3s --timeout 30s --tls-handshakes "$2" --cacert "$dir/cert/ca.pem" \
        --url "https://127.0.0.1:$tport" scenario counter >/dev/null 2>"$dir/err" || true
    tail -1 "$dir/rss"
}
echo "== browser VUs over TLS holding an open SSE stream (one client thread, io_uring)"
for hs in 256 0; do
    r1=$(tls_run 500 "$hs")
    r2=$(tls_run "$TLS_VUS" "$hs")
    awk -v hs="$hs" -v n2="$TLS_VUS" -v r1="$r1" -v r2="$r2" 'BEGIN {
        printf "  --tls-handshakes %-4s peak RSS %d KiB at 500 VUs, %d KiB at %d: marginal %.1f KiB per VU\n",
            hs, r1, r2, n2, (r2 - r1) / (n2 - 500) }'
done
