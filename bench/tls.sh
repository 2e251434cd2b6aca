#!/usr/bin/env bash
# TLS cost on hammer's side, against nginx (one worker, CPU 1; without
# nginx or with SERVER=bench_app, two bench_apps serving /_health, plain
# and TLS: bench/lib.sh, start_tls_pair; hammer one
# thread, CPU 0; 100 connections, DURATION s each, ROUNDS rounds, every
# variant of every binary interleaved, the order rotating each round):
# plain HTTP keep-alive, HTTPS keep-alive, and HTTPS with one request per
# connection (Connection: close; every request a handshake, resumed after
# the first). Then
# the memory of a connection: peak RSS of http and https keep-alive get at
# RSS_CONNS (two sizes) connections, and the marginal cost per connection.
# HAMMERS lists "label=path" binaries to compare (default: this build);
# PEERS (default "wrk h2load", those installed) run plain and TLS
# keep-alive in the same rounds, for the same ratio from other clients.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMERS=${HAMMERS:-hammer=${HAMMER:-build/bin/hammer}}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
RSS_CONNS=${RSS_CONNS:-"200 2000"}
dir=$(mktemp -d)
start_tls_pair "$dir" "$(bench_port)" "${SERVER:-auto}"
# record label variant rps sent full resumed: appends a run's line to
# $dir/res, "label variant rps cpu_us_per_req full resumed user_us sys_us",
# its CPU from $dir/time (/usr/bin/time -f "%U %S").
record() {
    local u s
    read -r u s <"$dir/time"
    awk -v l="$1" -v n="$2" -v r="$3" -v u="$u" -v s="$s" -v c="$4" -v f="$5" -v x="$6" \
        'BEGIN { printf "%s %s %.0f %.2f %d %d %.2f %.2f\n", l, n, r, (u + s) * 1e6 / c, f, x,
                u * 1e6 / c, s * 1e6 / c }' | tee -a "$dir/res"
}
run() { # label binary variant url [options]
    taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" "$2" -q --no-server-watch -t 1 -c 100 -d "${DURATION}s" \
        --cacert "$dir/cert/ca.pem" --url "$4" --json "$dir/r.json" "${@:5}" scenario get >/dev/null 2>&1 || true
    sent=$(grep -o '"sent": [0-9]*' "$dir/r.json" | head -1 | grep -o '[0-9]*$')
    rps=$(grep -o '"throughput_rps": [0-9.e+]*' "$dir/r.json" | awk '{print $2}')
    full=$(grep -o '"full_handshakes": [0-9]*' "$dir/r.json" | grep -o '[0-9]*$')
    res=$(grep -o '"resumed_handshakes": [0-9]*' "$dir/r.json" | grep -o '[0-9]*$')
    record "$1" "$3" "$rps" "$sent" "$full" "$res"
}
# The peers, measured in the same rounds over plain and TLS keep-alive:
# what OpenSSL costs a client that is not hammer.
run_peer() { # label variant url (no handshake counts)
    case $1 in
    wrk)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            wrk -t1 -c 100 -d "${DURATION}s" "$3" >"$dir/peer.out" 2>&1 || true
        sent=$(awk '/requests in/ {print $1}' "$dir/peer.out")
        rps=$(awk '/Requests\/sec/ {print $2}' "$dir/peer.out")
        ;;
    h2load)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            h2load --h1 -t1 -c 100 -D "$DURATION" "$3" >"$dir/peer.out" 2>&1 || true
        sent=$(awk '/^requests:/ {print $8}' "$dir/peer.out")
        rps=$(awk '/^finished in/ {gsub(",",""); print $4}' "$dir/peer.out")
        ;;
    esac
    record "$1" "$2" "$rps" "$sent" 0 0
}
peers=()
for t in ${PEERS-wrk h2load}; do
    if command -v "$t" >/dev/null; then peers+=("$t"); else echo "peer $t not installed: not measured"; fi
done
read -r -a bins <<<"$HAMMERS"
variants=(http https https-per-request)
urls=("http://127.0.0.1:$p$path" "https://127.0.0.1:$((p + 1))$path" "https://127.0.0.1:$((p + 1))$path")
jobs=()
for b in "${bins[@]}"; do for v in 0 1 2; do jobs+=("$b $v"); done; done
for t in "${peers[@]}"; do for v in 0 1; do jobs+=("peer=$t $v"); done; done
for ((r = 0; r < ROUNDS; r++)); do
    for ((j = 0; j < ${#jobs[@]}; j++)); do
        read -r b v <<<"${jobs[$(((j + r) % ${#jobs[@]}))]}"
        if [ "${b%%=*}" = peer ]; then
            run_peer "${b#*=}" "${variants[$v]}" "${urls[$v]}"
            continue
        fi
        # one request per connection: the client asks the server to close
        extra=()
        [ "$v" = 2 ] && extra=(-H "Connection: close")
        run "${b%%=*}" "${b#*=}" "${variants[$v]}" "${urls[$v]}" "${extra[@]}"
    done
done
echo "binary     variant             req/s median (range)      client CPU us/req median (range)  of it user | system"
for b in "${bins[@]}" "${peers[@]/#/peer=}"; do
    l=${b%%=*}
    vs=("${variants[@]}")
    [ "$l" = peer ] && l=${b#*=} && vs=(http https)
    for v in "${vs[@]}"; do
        printf "%-10s %-19s %-25s %-25s %s | %s\n" "$l" "$v" \
            "$(awk -v l="$l" -v v="$v" '$1 == l && $2 == v {print $3}' "$dir/res" | stat)" \
            "$(awk -v l="$l" -v v="$v" '$1 == l && $2 == v {print $4}' "$dir/res" | stat)" \
            "$(awk -v l="$l" -v v="$v" '$1 == l && $2 == v {print $7}' "$dir/res" | stat)" \
            "$(awk -v l="$l" -v v="$v" '$1 == l && $2 == v {print $8}' "$dir/res" | stat)"
    done
    # https / http in each round (the nth run of each), then across rounds
    printf "%-10s https / http CPU per request, per round: %s\n" "$l" "$(awk -v l="$l" '
        $1 == l && $2 == "http" { h[++nh] = $4 } $1 == l && $2 == "https" { s[++ns] = $4 }
        END { for (i = 1; i <= nh && i <= ns; i++) printf "%.3f\n", s[i] / h[i] }' "$dir/res" | stat)"
done
if [ ${#bins[@]} -gt 1 ]; then
    first=${bins[0]%%=*}
    for b in "${bins[@]:1}"; do
        l=${b%%=*}
        printf "%s / %s https CPU per request, per round: %s\n" "$l" "$first" "$(awk -v a="$first" -v l="$l" '
            $1 == a && $2 == "https" { x[++na] = $4 } $1 == l && $2 == "https" { y[++nl] = $4 }
            END { for (i = 1; i <= na && i <= nl; i++) printf "%.3f\n", y[i] / x[i] }' "$dir/res" | stat)"
    done
fi
echo "== keep-alive get, peak RSS (KiB) of one client thread, http and https"
for b in "${bins[@]}"; do
    l=${b%%=*}
    for v in 0 1; do
        : >"$dir/rss_$l"
        for n in $RSS_CONNS; do
            /usr/bin/time -f "%M" -o "$dir/rss" taskset -c 0 "${b#*=}" -q --no-server-watch -t 1 -c "$n" \
                -d 4s --timeout 20s --cacert "$dir/cert/ca.pem" --url "${urls[$v]}" \
                scenario get >/dev/null 2>&1 || true
            k=$(tail -1 "$dir/rss")
            echo "$n $k" >>"$dir/rss_$l"
            printf "%-10s %-6s %6d conns: %8d KiB\n" "$l" "${variants[$v]}" "$n" "$k"
        done
        awk -v l="$l" -v v="${variants[$v]}" 'NR == 1 { n1 = $1; k1 = $2 } NR == 2 {
            printf "%-10s %-6s marginal per connection: %.2f KiB\n", l, v, ($2 - k1) / ($1 - n1) }' "$dir/rss_$l"
    done
done
