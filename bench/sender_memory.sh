#!/usr/bin/env bash
# What a sender costs in memory, per kind of sender in the sender pool:
# the marginal peak RSS per sender between -c LOW and -c HIGH, for the
# get scenario, the built-in hammer model (counter) and a hammer-model
# flow (examples/flows/counter.yaml), against one bench_app, for each
# "label=path" binary in HAMMERS, interleaved over ROUNDS. Peak RSS does
# not move with the machine's load, so few rounds suffice.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMERS=${HAMMERS:-hammer=${HAMMER:-build/bin/hammer}}
APP=${APP:-build/bin/bench_app}
LOW=${LOW:-1000}
HIGH=${HIGH:-5000}
ROUNDS=${ROUNDS:-3}
N=${N:-50000}
dir=$(mktemp -d)
port=$(bench_port)
ulimit -n 20000
start_app "$APP" "$port" "$dir"

# peak KiB of one run: binary, -c, path, what to run
peak() {
    local bin=$1 c=$2 path=$3
    shift 3
    /usr/bin/time -f "%M" -o "$dir/rss" "$bin" -q -t 1 --no-server-watch -c "$c" -n "$N" \
        --timeout 30s --url "http://127.0.0.1:$port$path" "$@" >/dev/null 2>&1 || true
    cat "$dir/rss"
}

read -r -a bins <<<"$HAMMERS"
# name:path:arguments
kinds=("get:/_health:scenario get" "hammer::scenario counter"
    "flow::flow examples/flows/counter.yaml")
for r in $(seq "$ROUNDS"); do
    for k in "${kinds[@]}"; do
        for b in "${bins[@]}"; do
            rest=${k#*:}
            # shellcheck disable=SC2086
            lo=$(peak "${b#*=}" "$LOW" "${rest%%:*}" ${rest#*:})
            # shellcheck disable=SC2086
            hi=$(peak "${b#*=}" "$HIGH" "${rest%%:*}" ${rest#*:})
            awk -v l="${b%%=*}" -v k="${k%%:*}" -v lo="$lo" -v hi="$hi" -v a="$LOW" -v z="$HIGH" \
                'BEGIN { printf "%s %s %.2f\n", l, k, (hi - lo) / (z - a) }' >>"$dir/per"
        done
    done
done
printf "%-10s %-8s %s\n" binary sender "KiB per sender: median (min..max)"
for b in "${bins[@]}"; do
    for k in "${kinds[@]}"; do
        v=$(awk -v l="${b%%=*}" -v k="${k%%:*}" '$1 == l && $2 == k { print $3 }' "$dir/per" | stat)
        printf "%-10s %-8s %s\n" "${b%%=*}" "${k%%:*}" "$v"
    done
done
