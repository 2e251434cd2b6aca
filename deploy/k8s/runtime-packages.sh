#!/usr/bin/env bash
# Prints the Debian packages that own the shared libraries the given
# binaries load (ldd), one per line, sorted: what hammer's runtime image
# installs (deploy/k8s/Dockerfile). Fails if a library has no package.
#   runtime-packages.sh BINARY...
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: runtime-packages.sh BINARY..." >&2; exit 2; }
libs=$(for bin in "$@"; do ldd "$bin"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
for lib in $libs; do
    # Merged /usr: ldd may name /lib/... while dpkg records /usr/lib/... (or
    # the other way round).
    owner=""
    for path in "$lib" "$(readlink -f "$lib")" "/usr$lib" "${lib#/usr}"; do
        owner=$(dpkg -S "$path" 2>/dev/null | head -n 1) && break
    done
    if [ -z "$owner" ]; then
        echo "runtime-packages: no Debian package owns $lib" >&2
        exit 1
    fi
    echo "${owner%%:*}"
done | sort -u
