#!/usr/bin/env bash
# Fails when a lower layer includes a higher one (docs/architecture.md,
# CONTRIBUTING.md "Layers"). Reads every #include of the C sources under
# src/, bench_app/ and include/hammer/ of the tree given (default: this
# checkout) and prints each include that its folder may not use.
#
#   scripts/check-layers.sh [ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# Which folders each folder may include (besides itself and system headers).
declare -A allowed=(
    [src/base]=""
    [src/engine]="base"
    [src/proto]="base engine"
    [src/stats]="base engine"
    [src/load]="base engine proto stats hammer"
    [src/flow]="base engine proto stats load hammer"
    [src/scenarios]="base engine proto stats load flow hammer"
    [src/cli]="base engine proto stats load flow scenarios cli hammer"
    [bench_app]="base engine proto"
    [include/hammer]=""
)
# Folders an include can name: "proto/http1.h" is src/proto's.
known="base engine proto stats load flow scenarios cli bench_app hammer"
# The one file of src/ that may include bench_app: hammer forks it.
bench_app_gate="src/cli/embedded.c"

bad=0
for dir in "${!allowed[@]}"; do
    [ -d "$dir" ] || continue
    self=${dir##*/}
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        inc=$(sed -E 's/^[^"<]*["<]([^">]*)[">].*/\1/' <<<"${rest#*:}")
        top=${inc%%/*}
        [ "$top" = "$inc" ] && continue # same folder or a system header
        case " $known " in *" $top "*) ;; *) continue ;; esac
        [ "$top" = "$self" ] && continue
        if [ "$top" = bench_app ] && [ "$file" = "$bench_app_gate" ]; then continue; fi
        case " ${allowed[$dir]} " in *" $top "*) continue ;; esac
        echo "$file:$line: $dir may not include $inc (it may use: ${allowed[$dir]:-nothing else})"
        bad=1
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$dir" \
                 --include='*.c' --include='*.h' --include='*.S' || true)
done
# A NAME_internal.h is its module's own: only the files of its folder
# whose names start with NAME (NAME.c, NAME_more.c) include it.
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest%%:*}
    inc=$(sed -E 's/^[^"<]*["<]([^">]*)[">].*/\1/' <<<"${rest#*:}")
    case "$inc" in *_internal.h) ;; *) continue ;; esac
    module=${inc##*/}
    module=${module%_internal.h}
    incdir=${inc%/*}
    filedir=${file%/*}
    base=${file##*/}
    if [ "${filedir##*/}" = "$incdir" ] && [ "$incdir" != "$inc" ]; then
        case "$base" in "$module".* | "$module"_*) continue ;; esac
    fi
    echo "$file:$line: $inc is ${module}'s own: only ${incdir}/${module}*.c may include it"
    bad=1
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*_internal\.h"' \
             src bench_app include tests bench fuzz --include='*.c' --include='*.h' 2>/dev/null || true)

if [ "$bad" -ne 0 ]; then
    echo "layer check failed: see the layers in docs/architecture.md" >&2
    exit 1
fi
echo "layers: every include goes down"
