#!/usr/bin/env bash
# Every benchmark in turn; paste the results into docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "## coroutine switch"; build/bin/bench_coro_switch
echo "## echo io_uring vs epoll"; taskset -c 0,1 build/bin/bench_echo
echo "## get vs wrk vs h2load"; bash bench/get_vs_peers.sh
echo "## counter scenario"; bash bench/counter.sh
