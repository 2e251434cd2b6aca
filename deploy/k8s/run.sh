#!/usr/bin/env bash
# One hammer run as a Kubernetes Indexed Job (docs/distributed.md):
#
#   deploy/k8s/run.sh --image IMAGE --target URL --shards N [options] -- HAMMER ARGS...
#
# e.g.  deploy/k8s/run.sh --image REGISTRY/hammer:1 --shards 8 --threads 4 \
#         --target http://php-via.shop.svc.cluster.local:8080 -- -c 4000 -d 5m scenario counter
#
# Fills in the manifests of this folder (a start time --lead seconds from
# now shared by every shard, the run name, the image, the target), applies
# the results volume and the shards' Job, waits until every shard has
# finished, runs the merge Job, prints its summary and copies the run's
# files (shard-*.json, merged.json, merged.md, merged.html, merged.hlog) to
# ./hammer-results-RUN. Exits with hammer merge's code (0 passed, 1 failed,
# 2 refused) or 2 when something on the way failed.
#
# options:
#   --image IMAGE     hammer's image (deploy/k8s/Dockerfile), pushed where the cluster pulls
#   --target URL      what the shards load (a Service's cluster DNS name, or a public URL)
#   --shards N        shards, one pod each (1..1000)
#   --threads T       engine threads per shard = its CPU request (default 2)
#   --lead SECONDS    from now to the shared start (default 120): time for every pod to be
#                     scheduled, pull the image and set up; a late shard warns and skews
#   --run NAME        the run's name (default r<UTC time>): Job names, run id, results folder
#   --namespace NS    kubectl's namespace (default: the context's)
#   --render DIR      only write the filled-in manifests to DIR (no kubectl)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

image="" target="" shards="" threads=2 lead=120 run="" namespace="" render=""
usage() {
    sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --image) image=$2; shift ;;
    --target) target=$2; shift ;;
    --shards) shards=$2; shift ;;
    --threads) threads=$2; shift ;;
    --lead) lead=$2; shift ;;
    --run) run=$2; shift ;;
    --namespace) namespace=$2; shift ;;
    --render) render=$2; shift ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) echo "run.sh: unknown option $1" >&2; usage ;;
    esac
    shift
done
[ -n "$image" ] && [ -n "$target" ] && [ -n "$shards" ] && [ $# -gt 0 ] || usage
[ -n "$run" ] || run="r$(date -u +%Y%m%d%H%M%S)"
[[ $run =~ ^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$ ]] ||
    { echo "run.sh: --run must be lowercase letters, digits and '-' (a Kubernetes name)" >&2; exit 2; }
[[ $shards =~ ^[0-9]+$ ]] && [ "$shards" -ge 1 ] && [ "$shards" -le 1000 ] ||
    { echo "run.sh: --shards must be 1..1000" >&2; exit 2; }
[[ $threads =~ ^[0-9]+$ ]] && [ "$threads" -ge 1 ] || { echo "run.sh: bad --threads" >&2; exit 2; }
[[ $lead =~ ^[0-9]+$ ]] || { echo "run.sh: --lead takes whole seconds" >&2; exit 2; }

# The hammer words as one shell-quoted string (the pod splits it back).
hammer_args=$(printf '%q ' "$@")
hammer_args=${hammer_args% }
start_at=$(date -u -d "+$lead seconds" +%Y-%m-%dT%H:%M:%S.%3NZ)

# A value inside a YAML double-quoted scalar, then inside a sed replacement.
yaml_escape() { local v=${1//\\/\\\\}; printf '%s' "${v//\"/\\\"}"; }
sed_escape() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }
fill() {
    sed -e "s|__RUN__|$(sed_escape "$run")|g" \
        -e "s|__SHARDS__|$shards|g" \
        -e "s|__THREADS__|$threads|g" \
        -e "s|__START_AT__|$start_at|g" \
        -e "s|__IMAGE__|$(sed_escape "$(yaml_escape "$image")")|g" \
        -e "s|__TARGET__|$(sed_escape "$(yaml_escape "$target")")|g" \
        -e "s|__HAMMER_ARGS__|$(sed_escape "$(yaml_escape "$hammer_args")")|g" \
        "$1"
}

out=${render:-$(mktemp -d)}
mkdir -p "$out"
for f in results-pvc shards-job merge-job results-reader bench-app; do
    fill "$here/$f.yaml" >"$out/$f.yaml"
done
if [ -n "$render" ]; then
    echo "run.sh: manifests for run $run (start $start_at) in $render"
    exit 0
fi

command -v kubectl >/dev/null || { echo "run.sh: kubectl not found" >&2; exit 2; }
k=(kubectl)
[ -z "$namespace" ] || k+=(--namespace "$namespace")

# Waits until Job $1 has $2 finished pods (succeeded or failed); prints "succeeded failed".
wait_finished() {
    local s f
    while :; do
        read -r s f < <("${k[@]}" get job "$1" \
            -o jsonpath='{.status.succeeded} {.status.failed}{"\n"}' 2>/dev/null || echo "0 0")
        s=${s:-0} f=${f:-0}
        if [ $((s + f)) -ge "$2" ] ||
            "${k[@]}" get job "$1" -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}' |
            grep -q True; then
            echo "$s $f"
            return
        fi
        sleep 5
    done
}

echo "run.sh: run $run: $shards shard(s) of hammer $hammer_args against $target, start $start_at"
"${k[@]}" apply -f "$out/results-pvc.yaml"
"${k[@]}" apply -f "$out/shards-job.yaml"
read -r ok failed < <(wait_finished "hammer-$run" "$shards")
echo "run.sh: shards finished: $ok succeeded, $failed failed (kubectl logs -l hammer/run=$run)"
"${k[@]}" apply -f "$out/merge-job.yaml"
read -r ok failed < <(wait_finished "hammer-merge-$run" 1)
"${k[@]}" logs "job/hammer-merge-$run" || true
code=2
[ "$ok" = 1 ] && code=0
if [ "$failed" = 1 ]; then
    code=$("${k[@]}" get pods -l "job-name=hammer-merge-$run" \
        -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' || echo 2)
fi

"${k[@]}" apply -f "$out/results-reader.yaml"
if "${k[@]}" wait --for=condition=Ready "pod/hammer-results-$run" --timeout=300s; then
    "${k[@]}" cp "hammer-results-$run:/results/$run" "hammer-results-$run" &&
        echo "run.sh: results in ./hammer-results-$run"
fi
"${k[@]}" delete pod "hammer-results-$run" --wait=false || true
rm -rf "$out"
exit "${code:-2}"
