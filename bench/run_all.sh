#!/usr/bin/env bash
# Every benchmark in turn; docs/PERFORMANCE.md records the results and method.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "## coroutine switch"; build/bin/bench_coro_switch
echo "## echo io_uring vs epoll"; taskset -c 0,1 build/bin/bench_echo
echo "## get vs wrk vs h2load"; bash bench/get_vs_peers.sh
echo "## scenarios against bench_app"
for s in counter:100000 cpu:20000 io:50000 spreadsheet:50000 spreadsheet-live:30000; do
    SCENARIO=${s%%:*} N=${s##*:} ROUNDS=3 bash bench/counter.sh | tail -4
done
echo "## memory"; bash bench/rss.sh
echo "## where a browser VU's memory goes"; bash bench/vu_memory.sh
echo "## TLS"; bash bench/tls.sh
echo "## HTTP/2: get vs h2load, browser VUs over h1 vs h2"; bash bench/h2.sh
