#!/bin/bash
# hammer's --hdr-log, read by the HdrHistogram project's JavaScript
# implementation (hdr-histogram-js from npm): the intervals must add up to
# the summary's action count and percentiles exactly.
# Usage: test_hlog_interop.sh HAMMER TOOLS_DIR
set -u
hammer=$1
tools=$2
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }

command -v node >/dev/null || skip "node is not installed (Debian: apt-get install nodejs npm)"
if [ ! -f "$tools/node_modules/hdr-histogram-js/package.json" ]; then
    command -v npm >/dev/null || skip "npm is not installed (Debian: apt-get install npm)"
    mkdir -p "$tools"
    timeout 180 npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
        hdr-histogram-js@3.0.1 >"$tools/npm.log" 2>&1 ||
        skip "npm could not install hdr-histogram-js (see $tools/npm.log)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$hammer" -d 3s -c 50 --timeout 60s --interval 1s --hdr-log "$tmp/run.hlog" --json "$tmp/run.json" \
    scenario counter >"$tmp/out" 2>&1 || { cat "$tmp/out"; echo "FAIL: hammer exited $?"; exit 1; }
NODE_PATH="$tools/node_modules" node "$here/tools/hlog_sum.js" "$tmp/run.hlog" "$tmp/run.json" ||
    { echo "FAIL: hdr-histogram-js disagrees with the summary"; exit 1; }
echo "hdr-histogram-js reads the log; its sum equals the summary"
