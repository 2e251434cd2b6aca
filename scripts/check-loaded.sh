#!/bin/sh
# Runs a command (make check) with two CPU-bound loops beside it, as a busy
# machine would have them: a test that only passes on an idle machine is a
# false alarm for every contributor. The loops are this script's own
# children and are killed when it ends, however it ends.
set -u
if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi
sh -c 'while :; do :; done' &
loop1=$!
sh -c 'while :; do :; done' &
loop2=$!
cleanup() {
    kill "$loop1" "$loop2" 2>/dev/null
    wait "$loop1" "$loop2" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
echo "check-loaded: two busy loops (pids $loop1 $loop2) beside: $*"
start=$(date +%s)
"$@"
rc=$?
echo "check-loaded: exit $rc after $(($(date +%s) - start)) s with the busy loops"
exit $rc
