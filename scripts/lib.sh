# Shared by the quick-start scripts: install what is missing, start what is not running, build.
# Every function is idempotent. Sourced, not run.

PANDO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Paths in ccache's keys relative to the checkout and the build directory left out of them, so a
# fresh clone elsewhere (CI's) reuses what an earlier checkout compiled.
export CCACHE_BASEDIR="$PANDO_ROOT" CCACHE_NOHASHDIR=1
# Qt's test library gives every test target its absolute build and source directories as
# defines, which put the checkout's path back into the key of every test's objects: a clone
# elsewhere compiled all of them again. Nothing reads them (QFINDTESTDATA is not used; tests
# find their files from the checkout), so they are left out of the key too.
export CCACHE_IGNOREOPTIONS="-DQT_TESTCASE_BUILDDIR=* -DQT_TESTCASE_SOURCEDIR=*"
# The dev, release, ASan and TSan trees together hold about 6 GB of objects: at ccache's default
# 5 GB each CI run evicted what the next one needed (65 clean-ups on this machine).
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-16G}"

PANDO_PACKAGES=(
    cmake ninja-build ccache g++ lld pkg-config git curl ca-certificates
    qt6-base-dev qt6-websockets-dev qt6-httpserver-dev libqt6sql6-sqlite libqt6sql6-psql
    libyaml-cpp-dev libgit2-dev libssh-dev libzstd-dev libssl-dev libarchive-dev libcurl4-openssl-dev libargon2-dev
    qt6-declarative-dev qt6-svg-dev qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
    qml6-module-qtquick-window qml6-module-qtqml-workerscript qml6-module-qtquick-templates qml6-module-qttest
    qml6-module-qtquick-dialogs qml6-module-qt-labs-folderlistmodel qml6-module-qtqml qml6-module-qtqml-models
    qt6-charts-dev qml6-module-qtcharts libqrencode-dev
    qt6-l10n-tools qt6-tools-dev
    docker.io busybox-static dpkg-dev caddy
)
PANDO_TEST_PACKAGES=(clang-tidy-16 clang-16 libclang-rt-16-dev clang-format postgresql rsyslog rsyslog-gnutls python3 python3-yaml python3-jsonschema openssl openssh-server openssh-client xvfb trayer
    libxcb1-dev debootstrap zsh fish pebble curl python3-jwt python3-cryptography docker-registry)

# With the minutes and seconds since the script started, so a slow phase shows.
say() { printf '\033[1m==> [%d:%02d] %s\033[0m\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# install_packages NAME...: installs the Debian packages that are not installed yet.
install_packages() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    as_root apt-get update -qq || die "apt-get update failed"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        || die "installing ${missing[*]} failed"
}

docker_answers() {
    curl -sf --max-time 2 --unix-socket /var/run/docker.sock http://docker/_ping >/dev/null 2>&1
}

# ensure_docker: starts dockerd when no Docker engine answers on /var/run/docker.sock.
ensure_docker() {
    docker_answers && return 0
    say "starting dockerd"
    if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
        as_root systemctl start docker || true
    fi
    if ! docker_answers; then
        as_root sh -c 'nohup dockerd >/var/log/pando-dockerd.log 2>&1 &'
    fi
    for _ in $(seq 1 60); do
        docker_answers && return 0
        sleep 0.5
    done
    die "dockerd did not start; see /var/log/pando-dockerd.log"
}

incus_answers() {
    curl -sf --max-time 2 --unix-socket /var/lib/incus/unix.socket http://incus/1.0 2>/dev/null | grep -q '"auth":"trusted"'
}

# ensure_incus: Incus 6 from Debian's bookworm-backports (added to apt's sources from the same
# mirror when missing), incusd running, and initialised once with a preseed: a dir storage pool
# and a bridge with DHCP on a free 10.x.y.0/24 (`incus admin init --auto` finds no subnet on
# machines like CI's). For the Incus runtime's tests; Pando itself uses Incus when it is there.
ensure_incus() {
    if [ ! -x /usr/libexec/incus/incusd ] || ! command -v incus >/dev/null 2>&1; then
        if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
            local mirror
            mirror=$(debian_mirror) || die "no Debian bookworm mirror in the apt sources"
            say "adding bookworm-backports to apt's sources (Incus 6 comes from there)"
            printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$mirror" | as_root tee /etc/apt/sources.list.d/pando-backports.sources >/dev/null
        fi
        say "installing Incus"
        as_root apt-get update -qq || die "apt-get update failed"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            -t bookworm-backports incus-base incus-client || die "installing Incus failed"
    fi
    install_packages dnsmasq-base busybox-static
    if ! incus_answers; then
        say "starting incusd"
        if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
            as_root systemctl start incus || true
        fi
        incus_answers || as_root sh -c 'nohup /usr/libexec/incus/incusd >>/var/log/pando-incusd.log 2>&1 &'
        as_root incus admin waitready --timeout 60 || die "incusd did not start; see /var/log/pando-incusd.log"
    fi
    as_root incus storage show default >/dev/null 2>&1 && return 0
    local third fourth subnet=
    for third in $(seq 101 140); do
        for fourth in 37 73 119 211; do
            ip -4 route 2>/dev/null | grep -q "^10\.$third\.$fourth\." && continue
            subnet="10.$third.$fourth"
            break 2
        done
    done
    [ -n "$subnet" ] || die "no free 10.x.y.0/24 for Incus's bridge"
    say "initialising Incus (bridge incusbr0 on $subnet.0/24)"
    as_root incus admin init --preseed <<PRESEED || die "incus admin init failed"
networks:
- name: incusbr0
  type: bridge
  config:
    ipv4.address: $subnet.1/24
    ipv4.nat: "true"
    ipv6.address: none
storage_pools:
- name: default
  driver: dir
profiles:
- name: default
  devices:
    root: {path: /, pool: default, type: disk}
    eth0: {name: eth0, network: incusbr0, type: nic}
PRESEED
}

# ensure_npm_tools: the servers tests run that come from npm (tests/tools/npm: s3rver), installed
# from its lock file into PANDO_NPM_TOOLS (default: the user's cache directory), again only when
# the lock file changed.
ensure_npm_tools() {
    local dir="${PANDO_NPM_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pando/npm-tools}" src="$PANDO_ROOT/tests/tools/npm"
    if [ -d "$dir/node_modules" ] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
        return 0
    fi
    command -v npm >/dev/null 2>&1 || install_packages nodejs npm
    say "installing the npm test tools"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$src/.npmrc" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || die "installing the npm test tools failed"
}

# ensure_base_image: pando/busybox:latest, made locally from Debian's busybox-static (no
# registry is needed). Apps' Dockerfiles start FROM it.
ensure_base_image() {
    docker image inspect pando/busybox:latest >/dev/null 2>&1 && return 0
    say "making the base image pando/busybox:latest"
    local root
    root=$(mktemp -d)
    mkdir -p "$root/bin" "$root/www" "$root/tmp" "$root/etc"
    cp /bin/busybox "$root/bin/busybox"
    for applet in sh httpd echo cat sleep ls wget env printf mkdir true false grep sed; do
        ln -s busybox "$root/bin/$applet"
    done
    echo 'hello from pando' >"$root/www/index.html"
    tar -C "$root" -c . | docker import - pando/busybox:latest >/dev/null || die "docker import failed"
    rm -rf "$root"
}

# debian_mirror: the Debian archive this machine's apt sources name for bookworm (deb822
# .sources files first, then sources.list), so images are made from the same mirror apt uses.
debian_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(awk 'BEGIN { RS = ""; FS = "\n" }
            /(^|\n)Suites:[^\n]*bookworm( |\n|$)/ && !/debian-security/ {
                for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, a, " "); print a[2]; exit } }' "$f")
        [ -n "$uri" ] && { echo "$uri"; return 0; }
    done
    if [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $3 == "bookworm" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
            /etc/apt/sources.list)
        [ -n "$uri" ] && { echo "$uri"; return 0; }
    fi
    return 1
}

# ensure_service_images: pando/postgres:15, pando/mariadb:10.11 and pando/redis:7, the images
# Pando provisions an app's services from (docs/services.md). One debootstrap root of Debian
# bookworm with the three servers is imported as pando/services-base:bookworm (its tarball is
# kept in the cache, so a second machine setup skips the download); the three tags are small
# builds on it adding resources/services' entry scripts. Quick when nothing changed.
ensure_service_images() {
    local dir="$PANDO_ROOT/resources/services"
    local digest
    digest=$(cat "$dir"/* | sha256sum | cut -c1-16)
    local tags=(postgres:15 mariadb:10.11 redis:7) entries=(postgres-entry.sh mariadb-entry.sh redis-entry.sh)
    local all=1 t
    for t in "${tags[@]}"; do
        [ "$(docker image inspect -f '{{index .Config.Labels "dev.pando.service-scripts"}}' "pando/$t" 2>/dev/null)" \
            = "$digest" ] || all=0
    done
    [ $all = 1 ] && return 0
    if ! docker image inspect pando/services-base:bookworm >/dev/null 2>&1; then
        local cache="${XDG_CACHE_HOME:-$HOME/.cache}/pando"
        local tarball="$cache/services-rootfs-bookworm.tar.zst"
        if [ ! -s "$tarball" ]; then
            install_packages debootstrap zstd
            local mirror root
            mirror=$(debian_mirror) || die "no Debian bookworm mirror in the apt sources"
            root=$(mktemp -d)
            say "making the service root (PostgreSQL, MariaDB, Redis) from $mirror"
            as_root debootstrap --variant=minbase \
                --include=postgresql-15,postgresql-client-15,mariadb-server,mariadb-client,redis-server,redis-tools \
                bookworm "$root" "$mirror" >/tmp/pando-debootstrap.log 2>&1 \
                || { as_root rm -rf "$root"; die "debootstrap failed; see /tmp/pando-debootstrap.log"; }
            # Packages' own first clusters and caches are not part of the image: the entry
            # scripts make a data directory per service.
            as_root rm -rf "$root/var/lib/postgresql/15/main" "$root/var/lib/mysql"/* "$root/var/cache/apt"/*.bin \
                "$root/var/lib/apt/lists"/* "$root/var/log"/*.log
            mkdir -p "$cache"
            as_root tar -C "$root" -c . | zstd -q -T0 -o "$tarball.tmp" && mv "$tarball.tmp" "$tarball" \
                || { as_root rm -rf "$root"; die "packing the service root failed"; }
            as_root rm -rf "$root"
        fi
        say "importing pando/services-base:bookworm"
        zstd -q -d -c "$tarball" | docker import - pando/services-base:bookworm >/dev/null || die "docker import failed"
    fi
    local i
    for i in "${!tags[@]}"; do
        say "making pando/${tags[$i]}"
        local out
        out=$(docker build -q --build-arg "ENTRY=${entries[$i]}" --label "dev.pando.service-scripts=$digest" \
            -t "pando/${tags[$i]}" "$dir" 2>&1) || die "building pando/${tags[$i]} failed: $out"
    done
}

# Ends a process and everything it started (a background build's cmake, ninja and compilers).
kill_tree() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}

# The tests scripts/sanitize asan runs under ASan and UBSan: the core's unit tests.
ASAN_TEST_LABELS=(-L unit -L '^core$')
# The tests scripts/sanitize tsan runs: the threaded parts (engine, scheduler, work pool, log hub,
# audit group commit, in_parallel).
TSAN_TESTS=(tst_scheduler tst_workpool tst_loghub tst_parallel tst_auditlog tst_engineownership tst_enginecapacity)
asan_tests() {
    ctest --test-dir "$PANDO_ROOT/build/asan" -N "${ASAN_TEST_LABELS[@]}" | sed -n 's/^ *Test *#[0-9]*: *//p'
}

# Sanitizer reports with function names and lines, when a symbolizer is there.
use_symbolizer() {
    local symbolizer
    symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
    if [ -n "$symbolizer" ]; then export ASAN_SYMBOLIZER_PATH="$symbolizer"; fi
}

# build PRESET [TARGET...]
build() {
    local preset=$1
    shift
    say "building ($preset)"
    cmake --preset "$preset" >/dev/null || die "cmake configure failed"
    cmake --build --preset "$preset" -- "$@" || die "build failed"
}
