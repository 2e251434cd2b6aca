#!/usr/bin/env bash
# Runs the libFuzzer harnesses of fuzz/ (built by `make fuzz` / `make
# fuzz-smoke` into BUILD/bin/fuzz_*), each for FUZZ_SECONDS, and fails when
# any of them finds something (crash, sanitizer report, leak, timeout,
# out-of-memory) or when a saved regression input fails again.
#
#   scripts/fuzz.sh BUILD [TARGET...]     (default: every fuzz_* in BUILD/bin)
#
# Environment: FUZZ_SECONDS (default 600) per target; FUZZ_JOBS (default 1)
# targets at a time; FUZZ_RSS_MB (default 2048) memory limit per target.
# Seeds are read from fuzz/corpus/<target>/ and never written; what a run
# learns goes to BUILD/fuzz-corpus/<target>/, findings to
# BUILD/fuzz-findings/<target>/, logs to BUILD/fuzz-logs/<target>.log.
# A summary line per target gives executions, corpus size and time.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/fuzz.sh BUILD [TARGET...]}
shift
seconds=${FUZZ_SECONDS:-600}
jobs=${FUZZ_JOBS:-1}
rss=${FUZZ_RSS_MB:-2048}

if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for f in "$build"/bin/fuzz_*; do
        [ -x "$f" ] && targets+=("$(basename "$f" | sed 's/^fuzz_//')")
    done
fi
if [ ${#targets[@]} -eq 0 ]; then
    echo "fuzz: no harnesses in $build/bin (build them with make fuzz)" >&2
    exit 1
fi

# Leaks are findings too; UBSan already stops at the first report
# (-fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

run_one() {
    local t=$1 bin="$build/bin/fuzz_$1"
    local work="$build/fuzz-corpus/$t" found="$build/fuzz-findings/$t"
    local log="$build/fuzz-logs/$t.log" seeds="$here/fuzz/corpus/$t"
    local reg="$here/fuzz/regressions/$t" dict="$here/fuzz/dict/$t.dict"
    mkdir -p "$work" "$found" "$build/fuzz-logs"
    rm -f "$found"/*
    : >"$log"
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin is missing" >"$log"
        return 1
    fi
    # Inputs that once failed must keep passing.
    if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
        if ! "$bin" -rss_limit_mb="$rss" -timeout=60 "$reg"/* >>"$log" 2>&1; then
            echo "fuzz: $t: a saved regression input fails again" >>"$log"
            return 1
        fi
    fi
    local args=(-max_total_time="$seconds" -rss_limit_mb="$rss" -timeout=30 -max_len=16384
        -print_final_stats=1 -artifact_prefix="$found/")
    [ -f "$dict" ] && args+=(-dict="$dict")
    local dirs=("$work")
    [ -d "$seeds" ] && dirs+=("$seeds")
    "$bin" "${args[@]}" "${dirs[@]}" >>"$log" 2>&1
    local rc=$?
    # libFuzzer exits non-zero on a finding; an artifact without one would
    # still be a finding.
    if [ $rc -ne 0 ] || [ -n "$(ls -A "$found")" ]; then
        return 1
    fi
    return 0
}

summary() {
    local t=$1 status=$2 log="$build/fuzz-logs/$1.log"
    local execs secs corpus
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    corpus=$(find "$build/fuzz-corpus/$t" -type f | wc -l)
    printf 'fuzz: %-10s %-6s execs %-10s corpus %-6s seconds %s\n' "$t" "$status" \
        "${execs:--}" "$corpus" "${secs:--}"
}

fail=0
pids=()
names=()
wait_one() {
    local pid=${pids[0]} t=${names[0]}
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
    if wait "$pid"; then
        summary "$t" ok
    else
        summary "$t" FAILED
        echo "fuzz: $t found something; see $build/fuzz-logs/$t.log and" \
            "$build/fuzz-findings/$t/" >&2
        grep -E '^(SUMMARY|==[0-9]+==ERROR|fuzz: )' "$build/fuzz-logs/$t.log" | head -5 >&2
        fail=1
    fi
}
for t in "${targets[@]}"; do
    run_one "$t" &
    pids+=($!)
    names+=("$t")
    [ ${#pids[@]} -ge "$jobs" ] && wait_one
done
while [ ${#pids[@]} -gt 0 ]; do wait_one; done
exit $fail
