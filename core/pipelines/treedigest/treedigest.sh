#!/bin/sh
# treedigest.sh DIR: prints the tree digest of DIR exactly as Pando's treeDigest() computes it,
# using only busybox applets (sh, find, sort, sha256sum, readlink, stat, printf, head).
# The format is described in docs/treedigest.md. Exit status 2: usage or DIR missing;
# 3: the tree holds something the digest refuses (a newline in a name, a device or fifo).
set -eu
set -o pipefail
export LC_ALL=C

dir=${1:-}
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "usage: treedigest.sh DIR (a directory)" >&2
    exit 2
fi
cd "$dir"

nl='
'
# One entry per line below: a newline inside a name cannot be told apart, so it is refused.
if [ -n "$(find . -name "*${nl}*" | head -n 1)" ]; then
    echo "treedigest: a name under $dir contains a newline" >&2
    exit 3
fi

# The digest is printed only when every entry was accepted (pipefail + set -e).
digest=$({
    printf 'treedigest v1\n'
    find . -mindepth 1 | sort | while IFS= read -r p; do
        rel=${p#./}
        if [ -L "$p" ]; then
            # A sentinel keeps the target's trailing newlines, which $(...) would strip.
            t=$(readlink "$p"; echo x)
            t=${t%x}
            t=${t%"$nl"}
            case $t in *"$nl"*)
                echo "treedigest: the target of symlink $rel contains a newline" >&2
                exit 3
                ;;
            esac
            h=$(printf '%s' "$t" | sha256sum)
            printf 'l 777 %s %s\n' "${h%% *}" "$rel"
        elif [ -d "$p" ]; then
            m=$(stat -c %a "$p")
            printf 'd %o - %s\n' $((0$m & 0777)) "$rel"
        elif [ -f "$p" ]; then
            m=$(stat -c %a "$p")
            h=$(sha256sum < "$p")
            printf 'f %o %s %s\n' $((0$m & 0777)) "${h%% *}" "$rel"
        else
            echo "treedigest: $rel is not a file, directory or symlink" >&2
            exit 3
        fi
    done
} | sha256sum)
echo "${digest%% *}"
