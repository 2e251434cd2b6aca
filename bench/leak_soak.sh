#!/usr/bin/env bash
# The leak verdict against a known leak: two soaks of DURATION (10m) run
# side by side, each against a bench_app of its own, one with
# --leak-rate RATE (1 MiB/s) and one without; hammer samples each server
# by --server-pid every second. Reported: the RSS slope hammer fitted, with
# its 95% interval, against the set rate, and whether each got the leak
# WARNING. The target: on, a WARNING with a slope within 20% of the rate;
# off, none.
#   bench/leak_soak.sh            (DURATION=10m RATE=1048576 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
APP=${APP:-build/bin/bench_app}
DURATION=${DURATION:-10m}
RATE=${RATE:-1048576}
dir=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT

soak() { # name leak-rate: starts its server and its hammer in the background
    local port
    port=$(bench_port)
    "$APP" --port "$port" --quiet --leak-rate "$2" &
    local app=$!
    pids+=("$app")
    wait_port "$port"
    "$HAMMER" --url "http://127.0.0.1:$port" -c 4 -R 200 -d "$DURATION" --interval 1s \
        --server-pid "$app" --json "$dir/$1.json" scenario counter >"$dir/$1.txt" 2>&1 &
    pids+=($!)
}
soak on "$RATE"
soak off 0
echo "== leak_soak: $DURATION each, side by side; leak-rate $RATE B/s on one server"
wait "${pids[1]}" "${pids[3]}" || true
for name in on off; do
    python3 - "$dir/$name.json" "$name" "$RATE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["server_resources"]["trends"]["resident_bytes"]
set_h = float(sys.argv[3]) * 3600 if sys.argv[2] == "on" else 0.0
slope, ci = t["slope_per_hour"], t["ci95_per_hour"]
mib = 1024 * 1024
off_by = f", {100 * (slope - set_h) / set_h:+.1f}% off the set rate" if set_h else ""
print(f"leak {sys.argv[2]:3}: set {set_h / mib:8.1f} MiB/h  measured {slope / mib:8.2f} "
      f"± {ci / mib:.2f} MiB/h (95% CI, {t['samples']} samples, {t['warmup_s']:.0f} s warm-up)"
      f"{off_by}; WARNING: {'yes' if t['warning'] else 'no'}")
# The other trends (a WARNING on any of them is the run's leak WARNING).
for k in ("open_fds", "contexts"):
    o = d["server_resources"]["trends"].get(k)
    if o:
        print(f"  {sys.argv[2]}: {k} {o['slope_per_hour']:+.2f} ± {o['ci95_per_hour']:.2f}/h, "
              f"growth {o['growth']:+.2f} over the fit; WARNING: {'yes' if o['warning'] else 'no'}")
print(f"  {sys.argv[2]}: any leak WARNING: {'yes' if d['server_resources']['leak_warning'] else 'no'}")
PY
    grep -E "^(WARNING|Server RSS)" "$dir/$name.txt" | sed "s/^/  $name: /" || true
done
