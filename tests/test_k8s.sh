#!/usr/bin/env bash
# deploy/k8s/ without a cluster or a container engine (kubectl is never
# called: there is no cluster here to validate against):
#  - every manifest parses as YAML, as shipped and as run.sh fills it in;
#  - the shards' Job is Indexed, N completions all in parallel, never
#    retried, JOB_COMPLETION_INDEX -> --shard I/N, one --start-at for all,
#    results on the volume the merge Job reads;
#  - the pods' scripts, taken from the filled-in manifests, run here for
#    real (2 shards against a local bench_app, then the merge step) with
#    the volume's /results pointed at a temporary folder;
#  - the Dockerfile builds with exactly scripts/deps.sh's packages, and
#    its runtime stage installs what runtime-packages.sh reads off the
#    built binaries, which are the libraries of deps.sh's -dev packages.
#   test_k8s.sh SOURCE_DIR HAMMER BENCH_APP
set -euo pipefail
src=$1 hammer=$2 bench_app=$3

if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "SKIP: python3's yaml module is missing (Debian: python3-yaml, in scripts/deps.sh)"
    exit 77
fi
# No cluster here, and a kubeconfig could point anywhere: kubectl is never called.
echo "note: no Kubernetes cluster here: the manifests are parsed and their pods' scripts run, not applied"

work=$(mktemp -d /tmp/hammer-k8s-test.XXXXXX)
app_pid=""
cleanup() {
    [ -z "$app_pid" ] || { kill "$app_pid" 2>/dev/null; wait "$app_pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT

# A bench_app for the pods' scripts to load. The log exists before the
# poll reads it: a background job opens its redirection only once it runs.
: >"$work/app.log"
"$bench_app" --port 0 >"$work/app.log" 2>&1 &
app_pid=$!
url=""
for _ in $(seq 1 200); do
    url=$(sed -n 's/^bench_app listening on \(http[^ ]*\).*/\1/p' "$work/app.log")
    [ -n "$url" ] && break
    sleep 0.05
done
[ -n "$url" ] || { echo "FAIL: bench_app did not start"; cat "$work/app.log"; exit 1; }

bash "$src/deploy/k8s/run.sh" --render "$work/rendered" --image hammer:test --target "$url" \
    --shards 2 --threads 1 --lead 2 --run t1 -- -c 8 -n 600 --threshold 'p99<10s' \
    --signals '{"note": "two words"}' scenario counter

python3 - "$src" "$work" "$hammer" "$url" <<'EOF'
import glob, json, os, re, subprocess, sys, yaml

src, work, hammer, url = sys.argv[1:5]
k8s = f"{src}/deploy/k8s"

def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")

def load(path):
    try:
        return list(yaml.safe_load_all(open(path)))
    except yaml.YAMLError as e:
        sys.exit(f"FAIL: {path} is not YAML: {e}")

shipped = sorted(glob.glob(f"{k8s}/*.yaml"))
check(len(shipped) >= 4, "the manifests are there")
for path in shipped:
    load(path)
rendered = {os.path.basename(p)[:-5]: load(p) for p in glob.glob(f"{work}/rendered/*.yaml")}
check(set(rendered) == {os.path.basename(p)[:-5] for p in shipped}, "run.sh fills in every manifest")
for name, docs in rendered.items():
    text = open(f"{work}/rendered/{name}.yaml").read()
    check("__" not in re.sub(r"#.*", "", text), f"{name}: a placeholder left")
print(f"{len(shipped)} manifests parse, as shipped and filled in")

job = rendered["shards-job"][0]
spec = job["spec"]
check(job["kind"] == "Job" and job["apiVersion"] == "batch/v1", "shards: a batch/v1 Job")
check(spec["completionMode"] == "Indexed", "shards: completionMode Indexed")
check(spec["completions"] == 2 and spec["parallelism"] == 2, "shards: N completions, all at once")
check(spec["backoffLimit"] == 0, "shards: a shard is never retried")
pod = spec["template"]["spec"]
check(pod["restartPolicy"] == "Never", "shards: restartPolicy Never")
c = pod["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
script = c["args"][0]
check('--shard "$JOB_COMPLETION_INDEX/$SHARDS"' in script, "shards: JOB_COMPLETION_INDEX -> --shard")
check('--start-at "$START_AT"' in script and env["START_AT"], "shards: one --start-at for all")
check(env["SHARDS"] == "2" and env["RUN"] == "t1" and env["TARGET"] == url, "shards: env filled in")
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
claim = pod["volumes"][0]["persistentVolumeClaim"]["claimName"]
merge = rendered["merge-job"][0]["spec"]["template"]["spec"]
check(merge["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim ==
      rendered["results-pvc"][0]["metadata"]["name"], "the merge reads the shards' volume")
check(mounts["results"] == merge["containers"][0]["volumeMounts"][0]["mountPath"] == "/results",
      "both mount it at /results")
check(rendered["results-pvc"][0]["spec"]["accessModes"] == ["ReadWriteMany"],
      "results: ReadWriteMany (pods on many nodes write it)")
# The start time is one hammer accepts.
check(subprocess.run([hammer, "--start-at", env["START_AT"], "--help"],
                     capture_output=True).returncode == 0, f"hammer takes {env['START_AT']}")
print(f"shards Job: Indexed, 2 in parallel, --shard from JOB_COMPLETION_INDEX, start {env['START_AT']}")

# The pods' scripts, for real: /results is a folder here.
results = f"{work}/results"
os.makedirs(results)
bindir = os.path.dirname(os.path.abspath(hammer))
def pod_env(extra):
    e = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    e.update(extra)
    return e
procs = []
for i in range(2):
    procs.append(subprocess.Popen(
        ["bash", "-c", script.replace("/results", results)],
        env=pod_env(dict(env, JOB_COMPLETION_INDEX=str(i))),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
outs = []
try:
    for p in procs:
        outs.append(p.communicate(timeout=240)[0])
finally:
    for p in procs:  # a shard that hangs must not outlive the test
        if p.poll() is None:
            p.kill()
            p.wait()
for i, p in enumerate(procs):
    check(p.returncode == 0, f"shard pod {i} exited {p.returncode}:\n{outs[i]}")
for i in range(2):
    d = json.load(open(f"{results}/t1/shard-{i}.json"))
    check(d["shard"]["index"] == i and d["shard"]["count"] == 2, f"shard {i} knew its index")
    check(d["actions"]["sent"] == 300, f"shard {i} did its 300")
    check(d["shard"]["thresholds"] == ["p99<10s"], f"shard {i} got the quoted threshold")
    check(d["shard"]["options"]["signals"] == '{"note": "two words"}', "a value with spaces")
mc = merge["containers"][0]
menv = {e["name"]: e["value"] for e in mc["env"]}
m = subprocess.run(["bash", "-c", mc["args"][0].replace("/results", results)],
                   env=pod_env(menv), capture_output=True, text=True, timeout=120)
check(m.returncode == 0, f"merge pod exited {m.returncode}:\n{m.stdout}{m.stderr}")
merged = json.load(open(f"{results}/t1/merged.json"))
check(merged["actions"]["sent"] == 600 and merged["actions"]["ok"] == 600, "merged 600 OK")
check(merged["latency_us"]["action"]["count"] == 600, "merged latency count 600")
check(merged["thresholds"][0]["threshold"] == "p99<10s" and merged["passed"], "merged passed")
for f in ("merged.md", "merged.html", "merged.hlog"):
    check(os.path.getsize(f"{results}/t1/{f}") > 0, f"{f} written")
print("pod scripts: 2 shards from JOB_COMPLETION_INDEX, merged to 600 OK; the summary is the "
      "merge pod's log")
EOF

# ---- the image: deps.sh's packages to build, the binaries' libraries to run ----
dockerfile="$src/deploy/k8s/Dockerfile"
stages=$(grep -c '^FROM ' "$dockerfile")
[ "$stages" -eq 2 ] || { echo "FAIL: expected a build and a runtime stage"; exit 1; }
build_stage=$(awk '/^FROM /{n++} n==1' "$dockerfile")
runtime_stage=$(awk '/^FROM /{n++} n==2' "$dockerfile")
grep -q 'sh scripts/deps.sh' <<<"$build_stage" ||
    { echo "FAIL: the build stage does not install with scripts/deps.sh"; exit 1; }
if grep -Eq 'apt(-get)? +install' <<<"$build_stage"; then
    echo "FAIL: the build stage installs packages besides scripts/deps.sh"
    exit 1
fi
installs=$(grep -Eo 'apt-get install [^&\\]*' <<<"$runtime_stage")
[ "$installs" = 'apt-get install -y --no-install-recommends $(cat /tmp/runtime-packages) ca-certificates ' ] ||
    { echo "FAIL: the runtime stage installs something else: $installs"; exit 1; }
release=$(sed -n 's/^ARG DEBIAN=//p' "$dockerfile")
host_release=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if [ -n "$host_release" ] && [ "$(. /etc/os-release && echo "$ID")" = debian ]; then
    [ "$release" = "$host_release" ] ||
        { echo "FAIL: the image is Debian $release, deps.sh is tested on $host_release"; exit 1; }
fi
runtime=$(bash "$src/deploy/k8s/runtime-packages.sh" "$hammer" "$bench_app")
for p in $runtime; do
    dpkg-query -W -f='${Status}' "$p" | grep -q "install ok installed" ||
        { echo "FAIL: runtime package $p is not installed"; exit 1; }
done
# Each library package deps.sh brings in for linking must be in the runtime list.
required=$(sed -n '/^REQUIRED="/,/"$/p' "$src/scripts/deps.sh" | tr -d '"\\' | sed 's/REQUIRED=//')
linked=0
for dev in $required; do
    case $dev in lib*-dev | zlib1g-dev) ;; *) continue ;; esac
    libs=$(dpkg-query -W -f='${Depends}' "$dev" | tr ',' '\n' | sed 's/[ (].*//;s/^ *//' |
        grep -E '^(lib|zlib)' | grep -v -- '-dev$' || true)
    hit=""
    for l in $libs; do grep -qx "$l" <<<"$runtime" && hit=$l; done
    if [ -z "$hit" ]; then
        echo "FAIL: deps.sh's $dev ($libs) is not among the image's runtime packages"
        exit 1
    fi
    linked=$((linked + 1))
done
echo "image: builds with deps.sh's packages on Debian $release; runs with" $runtime \
    "(the libraries of deps.sh's $linked -dev packages) + ca-certificates"
