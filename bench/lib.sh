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

# start_nginx DIR PORT: nginx, one worker on CPU 1, answering every path
# with 200 "Hello, world!" (13 bytes) at 127.0.0.1:PORT and, when
# DIR/cert holds scripts/gen-test-cert.sh's files, over TLS at PORT+1 too,
# offering NGINX_TLS (default both TLS 1.2 and 1.3, as Caddy and browsers
# do: nginx 1.22 alone stops at 1.2). Stops nginx and removes DIR on exit
# (a caller that sets its own EXIT trap stops it there).
start_nginx() {
    local dir=$1 port=$2 tls=
    [ -f "$dir/cert/server.pem" ] && tls="ssl_certificate $dir/cert/server.pem;
    ssl_certificate_key $dir/cert/server.key;
    ssl_session_cache shared:S:10m;
    ssl_protocols ${NGINX_TLS:-TLSv1.2 TLSv1.3};
    server { listen 127.0.0.1:$((port + 1)) ssl backlog=8192; location / { return 200 \"Hello, world!\"; } }"
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/error.log;
worker_rlimit_nofile 20000;
events { worker_connections 19000; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    server { listen 127.0.0.1:$port backlog=8192; location / { return 200 "Hello, world!"; } }
    $tls
}
CONF
    ulimit -n 20000
    taskset -c 1 nginx -c "$dir/nginx.conf" -p "$dir"
    trap "kill \$(cat '$dir/nginx.pid' 2>/dev/null) 2>/dev/null || true; rm -rf '$dir'" EXIT
    wait_port "$port"
}

# start_tls_pair DIR PORT SERVER: a plain HTTP server at PORT and a TLS one
# at PORT+1, both on CPU 1, answering a short 200 at $path: nginx
# (start_nginx) when SERVER is nginx, or auto and nginx is installed; else
# two bench_apps serving /_health (APP, default build/bin/bench_app). The
# certificate (scripts/gen-test-cert.sh) goes to DIR/cert; DIR is removed
# and the servers stopped on exit. Sets server, path and p (PORT), and
# prints which server and TLS version answer.
start_tls_pair() {
    local dir=$1 want=$3
    p=$2
    sh scripts/gen-test-cert.sh "$dir/cert" >/dev/null
    if [ "$want" = nginx ] || { [ "$want" = auto ] && command -v nginx >/dev/null; }; then
        server=nginx
        start_nginx "$dir" "$p"
        path=/
    else
        server=bench_app
        local a1 a2 app_bin=${APP:-build/bin/bench_app}
        ulimit -n 20000
        taskset -c 1 "$app_bin" --port "$p" --quiet &
        a1=$!
        taskset -c 1 "$app_bin" --port "$((p + 1))" --quiet --tls-cert "$dir/cert/server.pem" \
            --tls-key "$dir/cert/server.key" &
        a2=$!
        trap "kill $a1 $a2 2>/dev/null || true; rm -rf '$dir'" EXIT
        path=/_health
    fi
    wait_port "$p"
    wait_port "$((p + 1))"
    echo "server: $server, $(openssl s_client -connect "127.0.0.1:$((p + 1))" -brief </dev/null 2>&1 |
        grep -m1 'Protocol version' || echo 'TLS version unknown')"
}
