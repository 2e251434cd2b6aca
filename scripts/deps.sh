#!/bin/sh
# Installs the Debian packages hammer needs to build and test. Runs apt-get only
# for what is missing, so a prepared machine pays nothing.
set -eu

REQUIRED="cmake make gcc pkg-config liburing-dev node-llhttp libssl-dev openssl \
libmimalloc-dev libsqlite3-dev zlib1g-dev libjansson-dev libinih-dev libbrotli-dev \
libyaml-dev libnghttp2-dev libncurses-dev python3 python3-yaml clang-format"
# Required too, for the fuzz harnesses (make fuzz, make fuzz-smoke in CI)
# and the ThreadSanitizer build (make check-tsan): clang and its libFuzzer /
# sanitizer runtimes. Kept apart from REQUIRED
# because nothing built from them is linked into hammer (the image's
# runtime packages are derived from REQUIRED's -dev packages).
REQUIRED_TOOLS="clang libclang-rt-14-dev"
# The real load balancers of the sticky-routing tests, Prometheus (promtool
# and a real scrape of --metrics-listen) and Chromium (the HTML reports in a
# real browser, make screenshots): their tests skip, with the reason,
# when these cannot be installed.
OPTIONAL="caddy haproxy prometheus chromium"
# HTTP/2 reference peers of the --http2 tests (nghttpd serves `get`, nghttp and
# h2load are clients of bench_app): their tests skip, saying why, without them.
OPTIONAL="$OPTIONAL nghttp2-server nghttp2-client"
# The live view's tests run hammer on a terminal tmux provides (capture-pane).
OPTIONAL="$OPTIONAL tmux"
# process-exporter: a real endpoint for --server-metrics to scrape.
OPTIONAL="$OPTIONAL prometheus-process-exporter"
# Peers and tools used by the benchmarks (make bench).
if [ "${HAMMER_DEPS_EXTRA:-0}" = 1 ]; then
    OPTIONAL="$OPTIONAL wrk apache2-utils nginx-light valgrind time tcpdump"
fi

missing_of() {
    out=""
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            out="$out $p"
        fi
    done
    echo "$out"
}

# shellcheck disable=SC2086
need=$(missing_of $REQUIRED $REQUIRED_TOOLS)
# shellcheck disable=SC2086
want=$(missing_of $OPTIONAL)
[ -z "$need$want" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    [ -n "$want" ] && echo "hammer: optional packages missing:$want" >&2
    [ -z "$need" ] && exit 0
    echo "hammer: missing Debian packages:$need" >&2
    echo "run as root:  apt-get update && apt-get install -y$need$want" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ -n "$need" ]; then
    echo "hammer: installing$need"
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $need
fi
for p in $want; do
    apt-get install -y -qq --no-install-recommends "$p" >/dev/null ||
        echo "hammer: could not install optional package $p; its tests will skip" >&2
done
