#!/usr/bin/env bash
# Rehearses a distributed run on this machine: N hammer shards (--shard
# I/N) against one bench_app, started together (--start-at), then merged
# with hammer merge. deploy/k8s/ does the same across machines
# (docs/distributed.md).
#
#   scripts/shards-local.sh [--netns] [--app-processes M] [--peak-rss] [--out DIR]
#                           [--lead SECONDS] N [HAMMER ARGS...]
#
# HAMMER ARGS default to: -c 40 -n 8000 -t 1 scenario counter
#
# --netns   bench_app runs in a network namespace of its own (listening on
#           10.200.0.1) and every shard in another, linked to it by a veth
#           pair (shard i: 10.200.<i+1>.2, bench_app's end 10.200.<i+1>.1):
#           each shard has its own network stack and ports, as on separate
#           machines. Needs root and `ip netns`. Only addresses inside the
#           namespaces this script creates are used, and the namespaces are
#           deleted on exit, also on failure or Ctrl-C.
#           Without --netns every process shares loopback.
# --app-processes M
#           bench_app runs M independent servers (bench_app --processes M,
#           ports P..P+M-1) and shard i drives server i % M: each server
#           process holds only its shards' connections, as one process may
#           hold at most `ulimit -n` sockets. The shards then ran against
#           different servers, so they are not merged (hammer merge takes
#           shards of one target only): each shard's files stay in --out
# --peak-rss
#           each shard's peak RSS (/usr/bin/time) into shard-I.rss (KiB),
#           and their sum said at the end
# --out     where the files go (default: a new directory under /tmp):
#           shard-I.json, shard-I.hlog, shard-I.log, merged.json,
#           merged.md, merged.html, merged.hlog, bench_app.log
# --lead    seconds from now to the shared start (default 3): long enough
#           for every shard to start and set up
#
# Environment: HAMMER and BENCH_APP (default: build/bin/hammer and
# build/bin/bench_app of this checkout).
# Exit: hammer merge's code (0 the merged run passed, 1 it did not, 2 the
# files were refused); 2 for a usage error or a set-up that failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
hammer=${HAMMER:-$root/build/bin/hammer}
bench_app=${BENCH_APP:-$root/build/bin/bench_app}
netns=0
app_processes=1
peak_rss=0
out=""
lead=3

usage() {
    sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --netns) netns=1 ;;
    --app-processes) app_processes=$2; shift ;;
    --peak-rss) peak_rss=1 ;;
    --out) out=$2; shift ;;
    --lead) lead=$2; shift ;;
    -h | --help) usage ;;
    -*) echo "shards-local: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
    shift
done
[ $# -ge 1 ] || usage
shards=$1
shift
if ! [[ $shards =~ ^[0-9]+$ ]] || [ "$shards" -lt 1 ] || [ "$shards" -gt 250 ]; then
    echo "shards-local: N must be 1..250" >&2
    exit 2
fi
[[ $lead =~ ^[0-9]+$ ]] || { echo "shards-local: --lead takes whole seconds" >&2; exit 2; }
if ! [[ $app_processes =~ ^[0-9]+$ ]] || [ "$app_processes" -lt 1 ] || [ "$app_processes" -gt 64 ]; then
    echo "shards-local: --app-processes takes 1..64" >&2
    exit 2
fi
if [ "$peak_rss" = 1 ] && ! [ -x /usr/bin/time ]; then
    echo "shards-local: --peak-rss needs /usr/bin/time (Debian package time)" >&2
    exit 2
fi
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-c 40 -n 8000 -t 1 scenario counter)
for exe in "$hammer" "$bench_app"; do
    [ -x "$exe" ] || { echo "shards-local: $exe not built (make build)" >&2; exit 2; }
done
[ -n "$out" ] || out=$(mktemp -d /tmp/hammer-shards.XXXXXX)
mkdir -p "$out"

# ---- clean-up: every process and namespace this script made, on any exit ----
tag="hm$$"
namespaces=()
cleanup() {
    local rc=$?
    # Only this shell's jobs still running (never a reaped pid reused since).
    local running
    running=$(jobs -pr)
    for pid in $running; do kill "$pid" 2>/dev/null || true; done
    for pid in $running; do wait "$pid" 2>/dev/null || true; done
    for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The words that run a command in namespace $1 (none for ""): `ip netns
# exec` execs the command, so $! of "${words[@]}" CMD & is the command.
ns_words() {
    words=()
    [ -z "$1" ] || words=(ip netns exec "$1")
}

app_ns=""
shard_ns=()
if [ "$netns" = 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "shards-local: --netns needs root" >&2; exit 2; }
    app_ns="$tag-app"
    ip netns add "$app_ns"
    namespaces+=("$app_ns")
    ip -n "$app_ns" link set lo up
    ip -n "$app_ns" addr add 10.200.0.1/32 dev lo
    for ((i = 0; i < shards; i++)); do
        ns="$tag-s$i"
        ip netns add "$ns"
        namespaces+=("$ns")
        shard_ns+=("$ns")
        ip -n "$ns" link set lo up
        # Created inside the namespaces, so no name is ever taken outside them.
        ip -n "$app_ns" link add "v$i" type veth peer name eth0 netns "$ns"
        ip -n "$app_ns" addr add "10.200.$((i + 1)).1/24" dev "v$i"
        ip -n "$app_ns" link set "v$i" up
        ip -n "$ns" addr add "10.200.$((i + 1)).2/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" route add 10.200.0.1/32 via "10.200.$((i + 1)).1"
    done
    host=10.200.0.1
    port=8080
else
    for ((i = 0; i < shards; i++)); do shard_ns+=(""); done
    host=127.0.0.1
    port=0
    # bench_app --processes needs a fixed first port: one whose run of M
    # ports is free on loopback now.
    if [ "$app_processes" -gt 1 ]; then
        port=$(python3 -c '
import socket, sys
m = int(sys.argv[1])
for base in range(20000, 60000, 97):
    socks = []
    try:
        for p in range(base, base + m):
            s = socket.socket(); s.bind(("127.0.0.1", p)); socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks: s.close()
    print(base); break' "$app_processes")
    fi
fi

# ---- bench_app ----
ns_words "$app_ns"
procs=()
[ "$app_processes" -gt 1 ] && procs=(--processes "$app_processes")
: >"$out/bench_app.log" # polled below before the background job may have opened it
"${words[@]}" "$bench_app" --host "$host" --port "$port" "${procs[@]}" >"$out/bench_app.log" 2>&1 &
app_pid=$!
urls=()
for _ in $(seq 1 200); do
    mapfile -t urls < <(sed -n 's/^bench_app listening on \(http[^ ]*\).*/\1/p' "$out/bench_app.log")
    [ "${#urls[@]}" -ge "$app_processes" ] && break
    kill -0 "$app_pid" 2>/dev/null || break
    sleep 0.05
done
url=${urls[0]:-}
if [ "${#urls[@]}" -lt "$app_processes" ]; then
    echo "shards-local: bench_app did not start:" >&2
    cat "$out/bench_app.log" >&2
    exit 2
fi

# ---- the shards, started together ----
start_at=$(date -u -d "+$lead seconds" +%Y-%m-%dT%H:%M:%S.%3NZ)
run_id="local-$(date -u +%Y%m%dT%H%M%S)-$$"
echo "shards-local: $shards shard(s) of: hammer ${args[*]}"
echo "shards-local: target ${urls[*]}${app_ns:+ (namespace $app_ns)}, start $start_at, run $run_id"
shard_pids=()
for ((i = 0; i < shards; i++)); do
    ns_words "${shard_ns[$i]}"
    [ "$peak_rss" = 1 ] && words+=(/usr/bin/time -f %M -o "$out/shard-$i.rss")
    "${words[@]}" "$hammer" --url "${urls[$((i % app_processes))]}" --shard "$i/$shards" \
        --start-at "$start_at" \
        --run-id "$run_id" --json "$out/shard-$i.json" --hdr-log "$out/shard-$i.hlog" -q \
        "${args[@]}" >"$out/shard-$i.log" 2>&1 &
    shard_pids+=($!)
done
failed=0
for ((i = 0; i < shards; i++)); do
    rc=0
    wait "${shard_pids[$i]}" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "shards-local: shard $i exited $rc:" >&2
        tail -n 5 "$out/shard-$i.log" >&2
        failed=1
    fi
done

if [ "$peak_rss" = 1 ]; then
    total=0
    for ((i = 0; i < shards; i++)); do
        kib=$(tail -n 1 "$out/shard-$i.rss" 2>/dev/null || true)
        [[ $kib =~ ^[0-9]+$ ]] || { echo "shards-local: shard $i has no peak RSS" >&2; kib=0; }
        total=$((total + kib))
    done
    echo "shards-local: peak RSS of the $shards shards together: $total KiB (each in shard-I.rss)"
fi

# ---- merge what came back ----
inputs=()
for ((i = 0; i < shards; i++)); do
    [ -f "$out/shard-$i.json" ] && inputs+=("$out/shard-$i.json")
    [ -f "$out/shard-$i.hlog" ] && inputs+=("$out/shard-$i.hlog")
done
[ ${#inputs[@]} -gt 0 ] || { echo "shards-local: no shard wrote results" >&2; exit 2; }
if [ "$app_processes" -gt 1 ]; then
    echo "shards-local: not merged: the shards drove $app_processes different servers" \
        "(each shard's results are shard-I.json)"
    echo "shards-local: results in $out"
    exit "$failed"
fi
rc=0
"$hammer" merge --json "$out/merged.json" --markdown "$out/merged.md" --html "$out/merged.html" \
    --hdr-log "$out/merged.hlog" "${inputs[@]}" || rc=$?
echo "shards-local: results in $out"
[ "$rc" -eq 0 ] && [ "$failed" -ne 0 ] && rc=1
exit "$rc"
