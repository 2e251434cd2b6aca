# Shared by the benchmark scripts (sourced, not run).

# A port for a benchmark server, below the ephemeral range so a busy
# machine's outgoing connections cannot hold it.
bench_port() { echo $((20000 + RANDOM % 12000)); }

# "median (min..max)" of the numbers on stdin, one a line. mawk, Debian's
# default awk, has no asort, so sort first.
stat() {
    sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                                          printf "%s (%s..%s)", m, v[1], v[NR] }'
}

# Waits (up to 10 s) until something accepts connections on 127.0.0.1:$1.
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}

# Starts bench_app ($1) on CPU 1 at port $2, removes $3 and stops it on
# exit, and waits until it listens. Sets app (its pid) and hz, and defines
# ticks: the CPU ticks (user + system) bench_app has used so far.
start_app_cpu1() {
    taskset -c 1 "$1" --port "$2" --quiet &
    app=$!
    trap "kill $app 2>/dev/null || true; rm -rf '$3'" EXIT
    wait_port "$2"
    hz=$(getconf CLK_TCK)
}
ticks() { awk '{print $14 + $15}' "/proc/$app/stat"; }
