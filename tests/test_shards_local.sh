#!/usr/bin/env bash
# The local rehearsal of a distributed run (scripts/shards-local.sh): 4
# shards of -n 8000 against one bench_app, started together, merged. The
# merged document must say 8000 sent, 8000 OK and a latency count of 8000,
# every shard its 2000; the merged interval log must hold 8000 values too
# (decoded here with Python's zlib and base64, independently of hammer).
#
# Each shard runs in its own network namespace when this runs as root and
# `ip netns` works here; otherwise on loopback, saying why.
#   test_shards_local.sh SOURCE_DIR HAMMER BENCH_APP
set -euo pipefail
src=$1
export HAMMER=$2 BENCH_APP=$3

mode=(--netns)
probe="hmprobe$$"
if [ "$(id -u)" -ne 0 ]; then
    mode=()
    echo "loopback: not root, so no network namespaces"
elif ! command -v ip >/dev/null || ! ip netns add "$probe" 2>/dev/null; then
    mode=()
    echo "loopback: \`ip netns add\` does not work here"
else
    ip netns del "$probe"
    echo "network namespaces: one per shard, bench_app in its own"
fi

out=$(mktemp -d /tmp/hammer-shards-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0
bash "$src/scripts/shards-local.sh" "${mode[@]}" --out "$out" 4 -c 40 -n 8000 -t 1 \
    scenario counter || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: shards-local.sh exited $rc" >&2
    for f in "$out"/*.log; do echo "== $f" >&2; tail -n 20 "$f" >&2; done
    exit 1
fi

python3 - "$out" "${#mode[@]}" <<'EOF'
import base64, json, struct, sys, zlib

out, netns = sys.argv[1], sys.argv[2] == "1"
merged = json.load(open(f"{out}/merged.json"))

def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")

check(merged["actions"]["sent"] == 8000, f"merged sent {merged['actions']['sent']}")
check(merged["actions"]["ok"] == 8000, f"merged ok {merged['actions']['ok']}")
check(merged["latency_us"]["action"]["count"] == 8000,
      f"merged latency count {merged['latency_us']['action']['count']}")
check(merged["signal"]["net_increment"] == 8000, "net increment over the shards' counters")
check(merged["passed"] is True, "merged run passed")
shard = merged["shard"]
check(shard["count"] == 4 and len(shard["inputs"]) == 4, "4 of 4 shards")
check(shard["missing"] == [] and shard["repeated"] == [], "no shard missing or repeated")
for i in range(4):
    d = json.load(open(f"{out}/shard-{i}.json"))
    check(d["shard"]["index"] == i and d["actions"]["sent"] == 2000 and d["actions"]["ok"] == 2000,
          f"shard {i} did its 2000")
    check(d["shard"]["run_id"] == shard["run_id"], f"shard {i} is of the run")
    target = d["target"]
    check(target.startswith("http://10.200.0.1:" if netns else "http://127.0.0.1:"),
          f"shard {i} target {target}")

def hist_count(b64):
    """Total count of one V2 compressed histogram (HdrHistogram's format)."""
    raw = base64.b64decode(b64)
    cookie, zlen = struct.unpack(">II", raw[:8])
    check(cookie & ~0xF0 == 0x1C849304, "compression cookie")
    data = zlib.decompress(raw[8:8 + zlen])
    payload = struct.unpack(">I", data[4:8])[0]
    p, end, total = 40, 40 + payload, 0
    while p < end:
        v, shift = 0, 0
        for n in range(9):
            b = data[p]; p += 1
            if n == 8:
                v |= b << 56
                break
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        x = (v >> 1) ^ -(v & 1)
        if x > 0:
            total += x
    return total

check(hist_count(merged["latency_us"]["action"]["hdr"]) == 8000, "merged hdr holds 8000")
log_total = sum(hist_count(line.rstrip("\n").split(",")[-1])
                for line in open(f"{out}/merged.hlog")
                if line[0] not in '#"')
check(log_total == 8000, f"merged interval log holds {log_total}")
print(f"4 shards merged: 8000 sent, 8000 OK, latency count 8000 (p99 "
      f"{merged['latency_us']['action']['p99']} us), start skew "
      f"{shard['start_skew_s'] * 1e3:.3f} ms, interval log 8000"
      f"{' (network namespaces)' if netns else ' (loopback)'}")
EOF
