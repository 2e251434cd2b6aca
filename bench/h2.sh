#!/usr/bin/env bash
# HTTP/2, five parts:
#  1. `hammer get --http2` vs `h2load` against nghttpd (h2c, a 13-byte
#     file): client on CPU 0, nghttpd on CPU 1, one client thread, CONNS
#     connections x STREAMS streams each, REQS requests a run (the same
#     work for both; a fixed duration would leave each tool's start-up and
#     end in a different share), the two tools interleaved (the order
#     swaps each round), ROUNDS rounds. Requests/s and client CPU us per
#     request (user+sys of the whole process, /usr/bin/time).
#  2. The same load under callgrind (epoll for hammer, as valgrind has no
#     io_uring): instructions per request, which the machine's load cannot
#     move; each tool runs N and 2N requests and the difference over N is
#     the marginal cost of a request, without start-up and exit. hammer's
#     once-a-second work (interval histograms) stays in, inflated by
#     valgrind's slowness (~50x): an upper bound for hammer.
#  3. Browser VUs over HTTP/1.1 vs HTTP/2 (h2c) against `bench_app --http2`
#     (CPU 1): peak RSS of hammer (CPU 0) at VUS1 and VUS2 VUs holding a
#     stream (one action, then a long think), and a paced run (LAT_VUS VUs,
#     LAT_N actions, --think 20ms): action and action->patch latency p50
#     and p99; h1 and h2 interleaved, ROUNDS rounds.
#  4. Where an HTTP/2 round trip's time goes: a paced GET of bench_app
#     --http2 from hammer and from h2load, each over HTTP/1.1 and HTTP/2,
#     beside the browser VUs' action; mean latency, interleaved rounds.
#  5. The wire split of part 3b's action->patch: the same paced run with
#     tcpdump on lo (root), bench/wire_split.py pairing each action's POST
#     packet with its patch's packet by the context id. The wire's p50 is
#     the kernel's and bench_app's share; hammer's p50 minus it is the
#     client's (a difference of medians, not a median of differences).
#     With it, CPU per action of both: hammer's user+sys (time(1)) and
#     bench_app's (its /proc ticks), each over the whole run.
# Prints median (range) per variant; the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
APP=${APP:-build/bin/bench_app}
ROUNDS=${ROUNDS:-5}
REQS=${REQS:-300000}
CONNS=${CONNS:-20}
STREAMS=${STREAMS:-10}
N=${N:-50000}
VUS1=${VUS1:-200}
VUS2=${VUS2:-1000}
LAT_VUS=${LAT_VUS:-50}
LAT_N=${LAT_N:-5000}
PARTS=${PARTS:-1 2 3 4 5}
for t in nghttpd h2load /usr/bin/time taskset valgrind; do
    command -v "$t" >/dev/null || { echo "missing $t: HAMMER_DEPS_EXTRA=1 sh scripts/deps.sh" >&2; exit 1; }
done
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

mkdir "$dir/www"
printf 'Hello, world!' >"$dir/www/index.html"
port=$(bench_port)
taskset -c 1 nghttpd --no-tls -d "$dir/www" "$port" >"$dir/nghttpd.log" 2>&1 &
pids+=($!)
wait_port "$port"
url="http://127.0.0.1:$port/index.html"
results="$dir/results.txt"
# The median (range) of column $3 of the results' lines of kind $1 for $2.
col() { awk -v k="$1" -v v="$2" -v c="$3" '$1 == k && $2 == v {print $c}' "$results" | stat; }
# A latency figure of the last paced browser run (parts 3b and 5).
lat() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["latency_us"][sys.argv[2]][sys.argv[3]])' \
    "$dir/l.json" "$1" "$2"; }

run_tool() { # tool -> appends "tool rps cpu_us_per_req"
    local tool=$1 out="$dir/out.txt" reqs rps
    case $tool in
    hammer)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            "$HAMMER" -q -t 1 --http2 -c "$CONNS" --streams "$STREAMS" -n "$REQS" \
            --url "$url" --json "$dir/h.json" scenario get >"$out" 2>&1 || true
        reqs=$(grep -o '"sent": [0-9]*' "$dir/h.json" | grep -o '[0-9]*$')
        rps=$(grep -o '"throughput_rps": [0-9.e+]*' "$dir/h.json" | awk '{print $2}')
        ;;
    h2load)
        taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" \
            h2load -t1 -c "$CONNS" -m "$STREAMS" -n "$REQS" "$url" >"$out" 2>&1
        reqs=$(awk '/^requests:/ {print $8}' "$out") # succeeded
        rps=$(awk '/^finished in/ {gsub(",",""); print $4}' "$out")
        ;;
    esac
    read -r u s <"$dir/time"
    awk -v t="$tool" -v r="$rps" -v u="$u" -v s="$s" -v n="$reqs" \
        'BEGIN { printf "%s %.0f %.3f\n", t, r, (u + s) * 1e6 / n }' >>"$results"
    tail -1 "$results"
}

if [[ " $PARTS " == *" 1 "* ]]; then
    echo "== 1. get over h2c: $CONNS connections x $STREAMS streams, $REQS requests, $ROUNDS rounds"
    tools=(hammer h2load)
    for ((r = 0; r < ROUNDS; r++)); do
        for ((i = 0; i < 2; i++)); do run_tool "${tools[(i + r) % 2]}"; done
    done
    echo "tool     req/s median (range)       client CPU us/req median (range)"
    for t in "${tools[@]}"; do
        printf "%-8s %-26s %s\n" "$t" "$(awk -v t="$t" '$1 == t {print $2}' "$results" | stat)" \
            "$(awk -v t="$t" '$1 == t {print $3}' "$results" | stat)"
    done
    awk '$1 == "hammer" {h[++nh] = $3} $1 == "h2load" {g[++ng] = $3}
         END { for (i = 1; i <= nh && i <= ng; i++) print h[i] / g[i] }' "$results" |
        { printf "hammer / h2load CPU per request, per round: "; stat; echo; }
fi

if [[ " $PARTS " == *" 2 "* ]]; then
    echo "== 2. callgrind: instructions per request, $N and $((2 * N)) requests, $CONNS x $STREAMS"
    for n in "$N" $((2 * N)); do
        valgrind --tool=callgrind --callgrind-out-file="$dir/cg.hammer.$n" \
            "$HAMMER" -q -t 1 --engine epoll --http2 -c "$CONNS" --streams "$STREAMS" -n "$n" \
            --url "$url" scenario get >/dev/null 2>&1 || true
        valgrind --tool=callgrind --callgrind-out-file="$dir/cg.h2load.$n" \
            h2load -t1 -c "$CONNS" -m "$STREAMS" -n "$n" "$url" >/dev/null 2>&1
    done
    for t in hammer h2load; do
        a=$(awk '/^totals:/ {print $2}' "$dir/cg.$t.$N")
        b=$(awk '/^totals:/ {print $2}' "$dir/cg.$t.$((2 * N))")
        awk -v t="$t" -v a="$a" -v b="$b" -v n="$N" \
            'BEGIN { printf "%-8s %.0f instructions per request (whole run of N), %.0f marginal\n", t, a / n, (b - a) / n }'
    done
fi

if [[ " $PARTS " == *" 3 "* ]]; then
    aport=$((port + 1))
    taskset -c 1 "$APP" --http2 --port "$aport" --quiet &
    pids+=($!)
    wait_port "$aport"
    aurl="http://127.0.0.1:$aport"
    echo "== 3a. browser VUs holding a stream: peak RSS of hammer (KiB)"
    peak() { taskset -c 0 /usr/bin/time -f "%M" -o "$dir/rss" "$@" >"$dir/out" 2>&1 || true; tail -1 "$dir/rss"; }
    for ((r = 0; r < ROUNDS; r++)); do
        for proto in h1 h2; do
            flag=; [ "$proto" = h2 ] && flag=--http2
            a=$(peak "$HAMMER" -q -t 1 $flag --mode browser -c "$VUS1" -n "$VUS1" --think 3s \
                --timeout 30s --url "$aurl" scenario counter)
            b=$(peak "$HAMMER" -q -t 1 $flag --mode browser -c "$VUS2" -n "$VUS2" --think 3s \
                --timeout 30s --url "$aurl" scenario counter)
            awk -v p="$proto" -v a="$a" -v b="$b" -v n1="$VUS1" -v n2="$VUS2" \
                'BEGIN { printf "rss %s %d %d %.2f\n", p, a, b, (b - a) / (n2 - n1) }' >>"$results"
            tail -1 "$results"
        done
    done
    for p in h1 h2; do
        printf "%s: %d VUs %s KiB, %d VUs %s KiB, marginal per VU %s KiB\n" "$p" "$VUS1" \
            "$(col rss "$p" 3)" "$VUS2" "$(col rss "$p" 4)" "$(col rss "$p" 5)"
    done
    echo "== 3b. paced browser VUs: $LAT_VUS VUs, $LAT_N actions, --think 20ms; latency in us"
    for ((r = 0; r < ROUNDS; r++)); do
        for proto in h1 h2; do
            flag=; [ "$proto" = h2 ] && flag=--http2
            taskset -c 0 "$HAMMER" -q -t 1 $flag --mode browser -c "$LAT_VUS" -n "$LAT_N" \
                --think 20ms --url "$aurl" --json "$dir/l.json" scenario counter >/dev/null 2>&1 || true
            echo "lat $proto $(lat action p50) $(lat action p99) $(lat patch p50) $(lat patch p99)" >>"$results"
            tail -1 "$results"
        done
    done
    for p in h1 h2; do
        printf "%s: action p50 %s p99 %s; action->patch p50 %s p99 %s\n" "$p" \
            "$(col lat "$p" 3)" "$(col lat "$p" 4)" "$(col lat "$p" 5)" "$(col lat "$p" 6)"
    done
fi
if [[ " $PARTS " == *" 4 "* ]]; then
    # Where an HTTP/2 round trip's time goes: the same paced GET /_health of
    # bench_app --http2 from hammer (get) and from h2load, each over
    # HTTP/1.1 and HTTP/2, beside the browser VUs' action (part 3b's run).
    # h2load over both protocols is one client, so h2load h2 - h2load h1
    # is bench_app's (and the protocol's) share; hammer h2 - h2load h2 is
    # hammer's client path. h2load says only the mean, so means for all.
    bport=$((port + 2))
    taskset -c 1 "$APP" --http2 --port "$bport" --quiet &
    pids+=($!)
    wait_port "$bport"
    burl="http://127.0.0.1:$bport"
    rps=$((LAT_VUS * 40))
    echo "== 4. one round trip, paced: $LAT_VUS connections, GET /_health at $rps/s for 4 s; mean us"
    svc() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["latency_us"][sys.argv[2]]["mean"])' \
        "$dir/p.json" "$1"; }
    for ((r = 0; r < ROUNDS; r++)); do
        for v in hammer-h1 hammer-h2 h2load-h1 h2load-h2 browser-h1 browser-h2; do
            flag=; [ "${v#*-}" = h2 ] && flag=--http2
            case $v in
            hammer-*)
                taskset -c 0 "$HAMMER" -q -t 1 $flag -c "$LAT_VUS" -R "$rps" -d 4s \
                    --url "$burl/_health" --json "$dir/p.json" scenario get >/dev/null 2>&1 || true
                m=$(svc service) ;;
            h2load-*)
                h1=; [ "$v" = h2load-h1 ] && h1=--h1
                m=$(taskset -c 0 h2load $h1 -t 1 -c "$LAT_VUS" -m 1 --rps 40 -D 4 "$burl/_health" 2>&1 |
                    awk '/^time for request:/ { v = $6; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
                           print (u == "ms") ? v * 1000 : (u == "s") ? v * 1e6 : v }') ;;
            browser-*)
                taskset -c 0 "$HAMMER" -q -t 1 $flag --mode browser -c "$LAT_VUS" -n "$LAT_N" \
                    --think 20ms --url "$burl" --json "$dir/p.json" scenario counter >/dev/null 2>&1 || true
                m=$(svc action) ;;
            esac
            echo "rt $v $m" >>"$results"
            tail -1 "$results"
        done
    done
    for v in hammer-h1 hammer-h2 h2load-h1 h2load-h2 browser-h1 browser-h2; do
        printf "%s: mean %s us\n" "$v" "$(col rt "$v" 3)"
    done
fi
if [[ " $PARTS " == *" 5 "* ]]; then
    if ! command -v tcpdump >/dev/null || [ "$(id -u)" != 0 ]; then
        echo "== 5. skipped: the wire split needs tcpdump (Debian package tcpdump) and root"
    else
        cport=$((port + 3))
        taskset -c 1 "$APP" --http2 --port "$cport" --quiet &
        capp=$!
        pids+=($capp)
        wait_port "$cport"
        echo "== 5. wire split of 3b's action->patch p50: $LAT_VUS VUs, $LAT_N actions; us"
        for ((r = 0; r < ROUNDS; r++)); do
            for proto in h1 h2; do
                flag=; [ "$proto" = h2 ] && flag=--http2
                tcpdump -i lo -tt -n -l -A -s 512 "tcp port $cport and (tcp[tcpflags] & tcp-push != 0)" \
                    >"$dir/cap.txt" 2>/dev/null &
                td=$!
                sleep 1 # tcpdump listening before the first packet
                t0=$(ticks "$capp")
                taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/cpu" "$HAMMER" -q -t 1 $flag --mode browser \
                    -c "$LAT_VUS" -n "$LAT_N" --think 20ms --url "http://127.0.0.1:$cport" \
                    --json "$dir/l.json" scenario counter >/dev/null 2>&1 || true
                t1=$(ticks "$capp")
                sleep 0.5
                kill "$td"
                wait "$td" 2>/dev/null || true
                read -r n wire wire90 < <(python3 bench/wire_split.py "$cport" "$dir/cap.txt")
                patch=$(lat patch p50)
                # CPU per action (user + system), the whole run's: hammer's
                # from time(1), bench_app's from its /proc ticks.
                ccpu=$(awk -v n="$LAT_N" 'END { printf "%.1f", ($1 + $2) * 1e6 / n }' "$dir/cpu")
                scpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" -v n="$LAT_N" \
                    'BEGIN { printf "%.1f", (b - a) / hz * 1e6 / n }')
                echo "split $proto $patch $wire $((patch - wire)) $n $wire90 $ccpu $scpu" >>"$results"
                tail -1 "$results"
            done
        done
        for p in h1 h2; do
            printf "%s: action->patch p50 %s = wire %s + client %s (wire p90 %s)\n" "$p" \
                "$(col split "$p" 3)" "$(col split "$p" 4)" "$(col split "$p" 5)" \
                "$(col split "$p" 7)"
            printf "%s: CPU us per action: hammer %s, bench_app %s\n" "$p" \
                "$(col split "$p" 8)" "$(col split "$p" 9)"
        done
    fi
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
