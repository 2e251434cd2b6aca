#!/bin/sh
# Installs the Debian packages hammer needs to build and test. Runs apt-get only
# for what is missing, so a prepared machine pays nothing.
set -eu

PACKAGES="cmake make gcc pkg-config liburing-dev node-llhttp libssl-dev \
libmimalloc-dev libsqlite3-dev zlib1g-dev libjansson-dev"
# Peers and servers used by benchmarks and load-balancer tests.
if [ "${HAMMER_DEPS_EXTRA:-0}" = 1 ]; then
    PACKAGES="$PACKAGES wrk nghttp2-client apache2-utils nginx-light caddy haproxy valgrind time"
fi

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "hammer: missing Debian packages:$missing" >&2
    echo "run as root:  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
echo "hammer: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
