#!/usr/bin/env bash
# Installs Pando's .deb into a clean Debian 12 root and starts the programs there.
#
# The root is `debootstrap --variant=minbase bookworm` from the Debian mirror this machine's apt
# uses (read from its sources at run time), so apt inside the root resolves the package's
# dependencies the way it would on a user's machine. Recommends are not installed: the package
# must work without a local Docker engine.
#
# Usage: debinstall.sh SOURCE_DIR VERSION
#   PANDO_DEB          the package to test; unset: scripts/package-deb builds it
#   PANDO_RELEASE_DIR  where scripts/package-deb builds (default: the release preset's build/release)
# Exit 77 (ctest's SKIP_RETURN_CODE) when a part is missing, or 1 with CI=true.
set -euo pipefail

src=$1
version=$2
suite=bookworm

say() { printf '%s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*" >&2
    exit 1
}
missing() {
    printf 'missing component: %s\n' "$*" >&2
    case "${CI:-}" in true | TRUE | True | 1) exit 1 ;; esac
    exit 77
}

# apt_mirror SUITE: the first Debian mirror URI apt uses for SUITE's main component, from the
# deb822 *.sources files or the one-line sources.list / *.list files.
apt_mirror() {
    local suite=$1 f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$suite" '
            $1 == "deb" && $3 == suite { for (i = 4; i <= NF; i++) if ($i == "main") { print $2; exit } }'
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk -v suite="$suite" '
            BEGIN { RS = ""; FS = "\n" }
            {
                types = ""; uris = ""; suites = ""; comps = ""; enabled = "yes"
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^[ \t]*#/ || !match($i, /^[A-Za-z-]+:/)) continue
                    key = tolower(substr($i, 1, RLENGTH - 1)); val = substr($i, RLENGTH + 1)
                    gsub(/^[ \t]+|[ \t]+$/, "", val)
                    if (key == "types") types = val; else if (key == "uris") uris = val
                    else if (key == "suites") suites = val; else if (key == "components") comps = val
                    else if (key == "enabled") enabled = tolower(val)
                }
                if (enabled == "no" || (" " types " ") !~ / deb / || (" " suites " ") !~ (" " suite " ") \
                    || (" " comps " ") !~ / main /) next
                split(uris, u, " "); print u[1]; exit
            }' "$f"
    done
}

[ "$(id -u)" -eq 0 ] || missing "root: debootstrap and chroot need it (run the test as root)"
command -v debootstrap >/dev/null || missing "debootstrap (apt-get install debootstrap)"
mirrors=$(apt_mirror "$suite")
mirror=${mirrors%%$'\n'*}
[ -n "$mirror" ] || missing "a Debian mirror for '$suite main' in /etc/apt/sources.list or /etc/apt/sources.list.d"

deb=${PANDO_DEB:-}
if [ -z "$deb" ]; then
    say "building the package: scripts/package-deb ${PANDO_RELEASE_DIR:-}"
    deb=$("$src/scripts/package-deb" ${PANDO_RELEASE_DIR:+"$PANDO_RELEASE_DIR"}) || fail "scripts/package-deb failed"
fi
[ -f "$deb" ] || fail "the package $deb does not exist"
case "$(basename "$deb")" in pando_"$version"*.deb) ;; *) fail "$deb is not pando version $version" ;; esac
say "package: $deb"

work=$(mktemp -d "${TMPDIR:-/tmp}/pando-debinstall.XXXXXX")
root=$work/root
cleanup() {
    local rc=$?
    if mountpoint -q "$root/proc"; then umount "$root/proc" || umount -l "$root/proc" || true; fi
    # --one-file-system: should an unmount have failed, never descend into what is mounted.
    rm -rf --one-file-system "$work" || true
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in_root SECONDS COMMAND...: runs COMMAND in the clean root with a clean environment.
in_root() {
    local limit=$1
    shift
    timeout "$limit" chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# The internal timeouts stay under the test's TIMEOUT so the EXIT trap still unmounts.
say "debootstrap --variant=minbase $suite (mirror from the apt sources)"
start=$SECONDS
timeout 600 debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    fail "debootstrap of $suite from the apt sources' mirror failed"
}
say "debootstrap took $((SECONDS - start)) s"

mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
start=$SECONDS
in_root 120 apt-get update -qq || fail "apt-get update in the clean root failed"
in_root 600 apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >"$work/install.log" 2>&1 || {
    tail -n 40 "$work/install.log" >&2
    fail "apt-get install of $(basename "$deb") into a clean $suite root failed"
}
say "apt-get install took $((SECONDS - start)) s ($(grep -c '^Setting up' "$work/install.log") packages set up)"

# expect_version PROGRAM [ENV...]: PROGRAM --version runs from the installed package and names VERSION.
expect_version() {
    local program=$1 out
    shift
    [ -x "$root/usr/bin/$program" ] || fail "/usr/bin/$program is not installed by the package"
    out=$(in_root 60 "$@" "/usr/bin/$program" --version 2>&1) || fail "$program --version failed in the clean root: $out"
    case "$out" in *"$version"*) ;; *) fail "$program --version printed '$out', not version $version" ;; esac
    say "$program --version: $out"
}
expect_version pandod
expect_version pando

# The programs' runtime needs came from Depends; Docker is only recommended.
# shellcheck disable=SC2016 # ${Status} is dpkg-query's, not the shell's
if in_root 60 dpkg-query -W -f='${Status}' docker.io 2>/dev/null | grep -q 'install ok installed'; then
    fail "docker.io was installed although it is only a Recommends"
fi

for f in /usr/share/doc/pando/README.md /usr/share/doc/pando/user-guide.md /usr/share/icons/hicolor/scalable/apps/pando.svg; do
    [ -f "$root$f" ] || fail "$f is not installed by the package"
done

# The desktop program and its entry ship together.
entry=/usr/share/applications/pando-desktop.desktop
if [ -e "$root/usr/bin/pando-desktop" ]; then
    [ -f "$root$entry" ] || fail "pando-desktop is installed but its desktop entry $entry is not"
    expect_version pando-desktop QT_QPA_PLATFORM=offscreen
    # Every dialog opens in the clean root: a QML module Qt loads only when a dialog first opens
    # (the file dialog's) would otherwise be missing from Depends unseen, and crash there.
    out=$(in_root 120 QT_QPA_PLATFORM=offscreen /usr/bin/pando-desktop --check 2>&1) ||
        fail "pando-desktop --check failed in the clean root: $out"
    say "$(printf '%s\n' "$out" | tail -1)"
else
    [ ! -e "$root$entry" ] || fail "$entry is installed but pando-desktop, its Exec=, is not"
    say "pando-desktop is not in the package (not built yet); its entry is rightly absent"
fi
say "PASS"
