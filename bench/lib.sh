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

# Starts bench_app ($1) at port $2 on any CPU, removes $3 and stops it on
# exit, and waits until it listens. Sets app (its pid).
start_app() {
    "$1" --port "$2" --quiet &
    app=$!
    trap "kill $app 2>/dev/null || true; rm -rf '$3'" EXIT
    wait_port "$2"
}

# Starts bench_app ($1) on CPU 1 at port $2, removes $3 and stops it on
# exit, and waits until it listens. Sets app (its pid) and hz, and defines
# ticks [PID]: the CPU ticks (user + system) bench_app (or PID) has used so far.
start_app_cpu1() {
    taskset -c 1 "$1" --port "$2" --quiet &
    app=$!
    trap "kill $app 2>/dev/null || true; rm -rf '$3'" EXIT
    wait_port "$2"
    hz=$(getconf CLK_TCK)
}
ticks() { awk '{print $14 + $15}' "/proc/${1:-$app}/stat"; }

# via_requests PORT DIR: loads /bench/counter as a new session and writes
# the raw requests hammer would send for it: DIR/action.req (POST
# /_action/increment with the session's cookie and the page's via_ctx) and
# DIR/sse.req (the page's SSE stream). A context shows its signals on its
# first stream only, so each run that observes needs a page of its own.
via_requests() {
    local ctx sid body enc
    ctx=$(curl -s -c "$2/jar" "http://127.0.0.1:$1/bench/counter" | grep -o '"via_ctx":"[^"]*"' | head -1)
    sid=$(awk '$6 == "via_session_id" {print $7}' "$2/jar")
    body="{$ctx}"
    printf 'POST /_action/increment HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nCookie: via_session_id=%s\r\nContent-Type: application/json\r\nDatastar-Request: true\r\nOrigin: http://127.0.0.1:%s\r\nContent-Length: %d\r\n\r\n%s' \
        "$1" "$sid" "$1" "${#body}" "$body" >"$2/action.req"
    enc=$(printf '%s' "$body" | od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g') # every byte %-encoded
    printf 'GET /_sse?datastar=%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAccept: text/event-stream\r\nDatastar-Request: true\r\nCookie: via_session_id=%s\r\n\r\n' \
        "$enc" "$1" "$sid" >"$2/sse.req"
}
# The floor's observer looks for this in the stream: the counter's wire id
# starts so (count__<route>__<hex>, docs/php-via-protocol.md).
FLOOR_SIGNAL='"count__'
