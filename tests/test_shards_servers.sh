#!/usr/bin/env bash
# scripts/shards-local.sh --app-processes --peak-rss: 3 shards against 3
# bench_app servers (bench_app --processes 3). Each shard must have driven
# a server of its own (its own target, on bench_app's ports P..P+2), every
# shard its share of -n, the results left unmerged (different targets), and each
# shard's peak RSS a number whose sum is said.
#   test_shards_servers.sh SOURCE_DIR HAMMER BENCH_APP
set -euo pipefail
src=$1
export HAMMER=$2 BENCH_APP=$3
out=$(mktemp -d /tmp/hammer-shards-servers.XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0
bash "$src/scripts/shards-local.sh" --app-processes 3 --peak-rss --out "$out" 3 -c 6 -n 300 -t 1 \
    scenario counter >"$out/script.log" 2>&1 || rc=$?
cat "$out/script.log"
if [ "$rc" -ne 0 ]; then
    echo "FAIL: shards-local.sh exited $rc" >&2
    for f in "$out"/shard-*.log "$out"/bench_app.log; do echo "== $f" >&2; tail -n 20 "$f" >&2; done
    exit 1
fi
python3 - "$out" <<'EOF'
import json, os, re, sys, urllib.parse
out = sys.argv[1]
def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
log = open(f"{out}/script.log").read()
check(not os.path.exists(f"{out}/merged.json"), "shards of different servers were merged")
check("not merged: the shards drove 3 different servers" in log, "the script says why it did not merge")
targets, total = set(), 0
for i in range(3):
    d = json.load(open(f"{out}/shard-{i}.json"))
    check(d["actions"]["sent"] == 100 and d["actions"]["ok"] == 100, f"shard {i} did its 100")
    targets.add(d["target"])
    kib = open(f"{out}/shard-{i}.rss").read().split()[-1]
    check(kib.isdigit() and int(kib) > 0, f"shard {i} peak RSS {kib!r}")
    total += int(kib)
check(len(targets) == 3, f"3 shards drove {len(targets)} servers")
ports = sorted(urllib.parse.urlsplit(t).port for t in targets)
check(ports == list(range(ports[0], ports[0] + 3)), f"ports {ports}: bench_app's P..P+2")
m = re.search(r"peak RSS of the 3 shards together: (\d+) KiB", log)
check(m and int(m.group(1)) == total, f"the sum said ({m.group(1) if m else None}) is {total}")
print(f"3 shards, 3 servers on ports {ports}, 100 OK each, peak RSS {total} KiB together")
EOF
