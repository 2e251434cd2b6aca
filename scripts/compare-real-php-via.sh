#!/usr/bin/env bash
# compare-real-php-via.sh — the same hammer runs against bench_app and
# against a real php-via server, interleaved, and a side-by-side table of
# what hammer saw (docs/fidelity.md has one, with how it was made).
#
#   scripts/compare-real-php-via.sh REAL_URL [ROUNDS]
#
#   REAL_URL  a php-via app serving php-via's tests/Load/bench_app.php routes
#             (/bench/counter, /bench/cpu, /bench/io, /bench/spreadsheet),
#             e.g. http://127.0.0.1:23099. Loopback only is what this is for.
#   ROUNDS    rounds per configuration (default 3); each round runs every
#             scenario x mode once against each target, the order of the two
#             targets flipping from one round to the next.
#
# Environment:
#   HAMMER      the hammer executable (default build/bin/hammer)
#   BENCH_URL   a running bench_app to compare with (default: hammer's
#               embedded bench_app, a fresh one for every run)
#   SCENARIOS   default "counter cpu io spreadsheet"
#   MODES       default "hammer browser"
#   CONC, ACTIONS  -c and -n of every run (default 50 and 2000)
#   OUT         where the runs' JSON go (default: a new directory under
#               ${TMPDIR:-/tmp}, printed at the end)
#
# Every run is bounded by -n and hammer's --timeout. The table gives, per
# scenario and mode, the median (and min-max) over the rounds of: HTTP OK %,
# patches observed per OK action, action p50/p99 and action->patch p50/p99
# (ms), throughput, and every HTTP status and error kind seen in any round.
set -euo pipefail

usage() {
    sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
REAL_URL=$1
ROUNDS=${2:-3}
case $ROUNDS in '' | *[!0-9]* | 0) usage ;; esac
case $REAL_URL in http://* | https://*) ;; *) echo "REAL_URL must be http(s)://..." >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HAMMER=${HAMMER:-$ROOT/build/bin/hammer}
SCENARIOS=${SCENARIOS:-counter cpu io spreadsheet}
MODES=${MODES:-hammer browser}
CONC=${CONC:-50}
ACTIONS=${ACTIONS:-2000}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/compare-php-via.XXXXXX")}
mkdir -p "$OUT"
[ -x "$HAMMER" ] || { echo "no hammer at $HAMMER (make build, or set HAMMER)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed for the table" >&2; exit 2; }

# One run: target (bench|real), scenario, mode, round.
run() {
    local target=$1 scenario=$2 mode=$3 round=$4 url=()
    if [ "$target" = real ]; then
        url=(--url "$REAL_URL")
    elif [ -n "${BENCH_URL:-}" ]; then
        url=(--url "$BENCH_URL")
    fi
    local json="$OUT/$scenario.$mode.$target.$round.json"
    # Exit 1 (failures, a failed check) still writes the JSON; the table shows it.
    "$HAMMER" -q "${url[@]}" --mode "$mode" -c "$CONC" -n "$ACTIONS" --json "$json" \
        scenario "$scenario" || [ $? -eq 1 ] ||
        echo "hammer failed ($target $scenario $mode round $round)" >&2
    printf '.' >&2
}

for round in $(seq 1 "$ROUNDS"); do
    for scenario in $SCENARIOS; do
        for mode in $MODES; do
            if [ $((round % 2)) -eq 1 ]; then
                run real "$scenario" "$mode" "$round"
                run bench "$scenario" "$mode" "$round"
            else
                run bench "$scenario" "$mode" "$round"
                run real "$scenario" "$mode" "$round"
            fi
        done
    done
done
echo >&2

python3 - "$OUT" "$ROUNDS" "$SCENARIOS" "$MODES" "$CONC" "$ACTIONS" "$REAL_URL" \
    "${BENCH_URL:-embedded bench_app}" <<'EOF'
import json, os, statistics, sys

out, rounds, scenarios, modes, conc, actions, real_url, bench = sys.argv[1:9]
rounds = int(rounds)

def load(scenario, mode, target, r):
    p = os.path.join(out, f"{scenario}.{mode}.{target}.{r}.json")
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def med(vals, fmt):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    m = statistics.median(vals)
    if len(vals) == 1 or min(vals) == max(vals):
        return fmt(m)
    return f"{fmt(m)} ({fmt(min(vals))}–{fmt(max(vals))})"

ms = lambda us: f"{us / 1000:.2f}" if us < 10000 else f"{us / 1000:.1f}"
pct = lambda v: f"{v:.2f}"
ratio = lambda v: f"{v:.3f}"
rate = lambda v: f"{v:.0f}"

print(f"hammer -c {conc} -n {actions}, {rounds} round(s); real: {real_url}; bench_app: {bench}")
print("Values: median (min–max) over the rounds; times in ms.")
print()
print("| scenario | mode | target | OK % | patches/OK | action p50 / p99 | "
      "action→patch p50 / p99 | actions/s | statuses and errors seen |")
print("|---|---|---|---|---|---|---|---|---|")
for scenario in scenarios.split():
    for mode in modes.split():
        for target, name in (("real", "php-via"), ("bench", "bench_app")):
            runs = [load(scenario, mode, target, r) for r in range(1, rounds + 1)]
            runs = [d for d in runs if d]
            if not runs:
                print(f"| {scenario} | {mode} | {name} | no run | | | | | |")
                continue
            okp, ppo, a50, a99, p50, p99, rps = [], [], [], [], [], [], []
            seen = {}
            for d in runs:
                a = d.get("actions", {})
                sent, ok = a.get("sent", 0), a.get("ok", 0)
                okp.append(100.0 * ok / sent if sent else None)
                obs = d.get("patches", {}).get("observed")
                ppo.append(obs / ok if ok and obs is not None else None)
                lat = d.get("latency_us", {})
                act, pat = lat.get("action", {}), lat.get("patch", {})
                a50.append(act.get("p50")), a99.append(act.get("p99"))
                p50.append(pat.get("p50") if pat.get("count") else None)
                p99.append(pat.get("p99") if pat.get("count") else None)
                rps.append(d.get("throughput_rps"))
                for status, n in a.get("by_status", {}).items():
                    seen[status] = seen.get(status, 0) + n
                for kind, n in (d.get("errors") or {}).items():
                    if isinstance(n, (int, float)) and n:
                        seen[kind] = seen.get(kind, 0) + n
                if d.get("fatal"):
                    seen["fatal"] = seen.get("fatal", 0) + 1
            statuses = ", ".join(f"{k} ×{v}" for k, v in sorted(seen.items()))
            print(f"| {scenario} | {mode} | {name} | {med(okp, pct)} | {med(ppo, ratio)} | "
                  f"{med(a50, ms)} / {med(a99, ms)} | {med(p50, ms)} / {med(p99, ms)} | "
                  f"{med(rps, rate)} | {statuses} |")
print()
print(f"JSON of every run: {out}")
EOF
