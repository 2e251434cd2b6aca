#!/usr/bin/env bash
# 100,000 browser VUs, each holding its SSE stream, against bench_app in
# network namespaces: what they cost in memory all together.
#
# One process may hold `ulimit -n` sockets (20,000 here) and a VU holds two
# (its page/action connection and its SSE stream), so the VUs are split
# over SHARDS hammer processes (scripts/shards-local.sh --netns: each in a
# network namespace of its own, with its own port range, as on separate
# machines), and bench_app over as many server processes (--app-processes:
# each server holds one shard's sockets). Every VU loads its page, opens
# its stream, fires one action, then thinks THINK, so all of them hold a
# stream at once before the first leaves.
#
# Prints the shards' peak RSS added up, per VU, the SSE streams opened and
# the actions answered, from each shard's JSON. Needs root (ip netns).
# On a quiet 2-core machine the page loads of 100,000 VUs take about a
# minute, so the default THINK (300 s) keeps every stream open until the
# last VU has started, and TIMEOUT (300 s) outlasts the start; the run
# takes about six minutes (docs/PERFORMANCE.md has the runs so far).
#
#   bench/vu_100k.sh            # VUS=100000 SHARDS=13 THINK=300s TIMEOUT=300s
#   VUS=4000 SHARDS=2 THINK=30s bench/vu_100k.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VUS=${VUS:-100000}
SHARDS=${SHARDS:-13}
THINK=${THINK:-300s}
TIMEOUT=${TIMEOUT:-300s}
ENGINE=${ENGINE:-io_uring}
out=$(mktemp -d /tmp/hammer-vu100k.XXXXXX)
per=$(((VUS + SHARDS - 1) / SHARDS))
if [ $((per * 2 + 64)) -gt "$(ulimit -Hn)" ]; then
    echo "vu_100k: $per VUs per shard need $((per * 2 + 64)) descriptors; raise SHARDS" >&2
    exit 2
fi
ulimit -n "$(ulimit -Hn)"
start=$(date +%s)
rc=0
scripts/shards-local.sh --netns --app-processes "$SHARDS" --peak-rss --lead 5 --out "$out" \
    "$SHARDS" --engine "$ENGINE" -t 1 --mode browser -c "$VUS" -n "$VUS" --think "$THINK" \
    --timeout "$TIMEOUT" scenario counter || rc=$?
took=$(($(date +%s) - start))
python3 - "$out" "$SHARDS" "$VUS" "$took" "$ENGINE" <<'EOF'
import json, sys
out, shards, vus, took, engine = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rss = opened = ok = sent = failed = 0
for i in range(shards):
    rss += int(open(f"{out}/shard-{i}.rss").read().split()[-1])
    d = json.load(open(f"{out}/shard-{i}.json"))
    opened += d["sse"]["opened"]
    a = d["actions"]
    ok += a["ok"]; sent += a["sent"]; failed += a["failed"]
print(f"vu_100k: {vus} browser VUs over {shards} shards ({engine}), {took} s in all")
print(f"  peak RSS of the shards together: {rss} KiB = {rss / 1024:.0f} MiB, "
      f"{rss / vus:.1f} KiB per VU (each shard's own baseline included)")
print(f"  SSE streams opened {opened} of {vus}; actions sent {sent}, ok {ok}, failed {failed}")
EOF
echo "vu_100k: files in $out"
exit "$rc"
