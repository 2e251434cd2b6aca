#!/bin/sh
# `make run` builds quietly, a line per stage, and ends with the summary and
# where the HTML report is (issue 15: it printed ~300 lines of build output
# before the result, and no report). Runs against the tree being tested, so
# the build step has nothing to do.
# argv: SOURCE_DIR BUILD_DIR
set -eu
src=$1
build=$2
rm -f "$build/report.html"
if ! out=$(make --no-print-directory -C "$src" run BUILD="$build" JOBS=2 2>&1); then
    printf '%s\n' "$out"
    echo "make run failed"
    exit 1
fi
printf '%s\n' "$out"
fail() {
    echo "FAIL: $*"
    exit 1
}
lines=$(printf '%s\n' "$out" | wc -l)
[ "$lines" -le 40 ] || fail "make run printed $lines lines"
printf '%s\n' "$out" | grep -q '^\[1/3\] configure' || fail "no configure stage line"
printf '%s\n' "$out" | grep -q '^\[2/3\] build' || fail "no build stage line"
printf '%s\n' "$out" | grep -q '^Result            PASS$' || fail "no passing summary"
last=$(printf '%s\n' "$out" | tail -n 1)
case "$last" in
"HTML report: $build/report.html"*) ;;
*) fail "the last line is not where the HTML report is: $last" ;;
esac
grep -q 'data-chart="percentiles"' "$build/report.html" || fail "the report has no charts"
echo "make run: $lines lines, ending with the summary and $build/report.html"
