#!/usr/bin/env bash
# TLS cost on hammer's side, in one run against nginx (one worker, CPU 1;
# hammer one thread, CPU 0; 100 connections, DURATION s each, ROUNDS rounds,
# interleaved): plain HTTP keep-alive, HTTPS keep-alive, and HTTPS with one
# request per connection (every request a handshake; resumed after the
# first, and full with --no-resume... not offered: resumption is always on).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HAMMER=${HAMMER:-build/bin/hammer}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
dir=$(mktemp -d)
sh scripts/gen-test-cert.sh "$dir/cert" >/dev/null
p=$(bench_port)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    ssl_certificate $dir/cert/server.pem;
    ssl_certificate_key $dir/cert/server.key;
    ssl_session_cache shared:S:10m;
    server { listen 127.0.0.1:$p; keepalive_requests 100000000; location / { return 200 "Hello, world!"; } }
    server { listen 127.0.0.1:$((p + 1)) ssl; keepalive_requests 100000000; location / { return 200 "Hello, world!"; } }
    server { listen 127.0.0.1:$((p + 2)) ssl; keepalive_requests 1; location / { return 200 "Hello, world!"; } }
}
CONF
taskset -c 1 nginx -c "$dir/nginx.conf" -p "$dir"
trap 'kill $(cat "$dir/nginx.pid") 2>/dev/null || true; rm -rf "$dir"' EXIT
sleep 0.5
run() { # name url -> "name rps cpu_us_per_req full resumed"
    taskset -c 0 /usr/bin/time -f "%U %S" -o "$dir/time" "$HAMMER" -q --no-server-watch -t 1 -c 100 -d "${DURATION}s" \
        --cacert "$dir/cert/ca.pem" --url "$2" --json "$dir/r.json" scenario get || true
    read -r u s <"$dir/time"
    sent=$(grep -o '"sent": [0-9]*' "$dir/r.json" | head -1 | grep -o '[0-9]*$')
    rps=$(grep -o '"throughput_rps": [0-9.e+]*' "$dir/r.json" | awk '{print $2}')
    full=$(grep -o '"full_handshakes": [0-9]*' "$dir/r.json" | grep -o '[0-9]*$')
    res=$(grep -o '"resumed_handshakes": [0-9]*' "$dir/r.json" | grep -o '[0-9]*$')
    awk -v n="$1" -v r="$rps" -v u="$u" -v s="$s" -v c="$sent" -v f="$full" -v x="$res" \
        'BEGIN { printf "%s %.0f %.2f %d %d\n", n, r, (u + s) * 1e6 / c, f, x }' | tee -a "$dir/res"
}
for ((r = 0; r < ROUNDS; r++)); do
    run http "http://127.0.0.1:$p/"
    run https "https://127.0.0.1:$((p + 1))/"
    run https-per-request "https://127.0.0.1:$((p + 2))/"
done
echo "variant             req/s median (range)      client CPU us/req median (range)"
for v in http https https-per-request; do
    printf "%-19s %-25s %s\n" "$v" "$(awk -v v=$v '$1 == v {print $2}' "$dir/res" | stat)" \
        "$(awk -v v=$v '$1 == v {print $3}' "$dir/res" | stat)"
done
