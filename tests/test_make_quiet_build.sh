#!/bin/sh
# make check's build step prints its stage lines and nothing of the build
# (no "gmake[3]: Entering directory" before the test lines). Runs against
# the tree being tested, so the build has nothing to do.
# argv: SOURCE_DIR BUILD_DIR
set -eu
src=$1
build=$2
if ! out=$(make -C "$src" quiet-build BUILD="$build" JOBS=2 2>&1); then
    printf '%s\n' "$out"
    echo "make quiet-build failed"
    exit 1
fi
printf '%s\n' "$out"
# make -C itself says where it goes; everything else must be a stage line.
noise=$(printf '%s\n' "$out" | grep -v "^make: \(Entering\|Leaving\) directory '$src'" |
    grep -v '^\[[12]/3\] ' || true)
if [ -n "$noise" ]; then
    echo "FAIL: the build step printed more than its stage lines:"
    printf '%s\n' "$noise"
    exit 1
fi
echo "make check's build: stage lines only"
