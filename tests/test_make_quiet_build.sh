#!/bin/sh
# make check's build step prints its stage lines and nothing of the build
# (no "gmake[3]: Entering directory" before the test lines). Runs against
# the tree being tested, so the build has nothing to do.
# argv: SOURCE_DIR BUILD_DIR
set -eu
src=$1
build=$2
# --no-print-directory: make -C's own "Entering directory" (make[N]: under
# a make, as in make check-asan) is not the build's output.
if ! out=$(make --no-print-directory -C "$src" quiet-build BUILD="$build" JOBS=2 2>&1); then
    printf '%s\n' "$out"
    echo "make quiet-build failed"
    exit 1
fi
printf '%s\n' "$out"
noise=$(printf '%s\n' "$out" | grep -v '^\[[12]/3\] ' || true)
if [ -n "$noise" ]; then
    echo "FAIL: the build step printed more than its stage lines:"
    printf '%s\n' "$noise"
    exit 1
fi
echo "make check's build: stage lines only"
