# Shared by the quick-start scripts: install what is missing, start what is not running, build.
# Every function is idempotent. Sourced, not run.

PANDO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PANDO_PACKAGES=(
    cmake ninja-build ccache g++ pkg-config git curl ca-certificates
    qt6-base-dev qt6-websockets-dev qt6-httpserver-dev libqt6sql6-sqlite libqt6sql6-psql
    libyaml-cpp-dev libgit2-dev libssh-dev libzstd-dev libssl-dev libarchive-dev libcurl4-openssl-dev libargon2-dev
    qt6-declarative-dev qt6-svg-dev qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
    qml6-module-qtquick-window qml6-module-qtqml-workerscript qml6-module-qtquick-templates qml6-module-qttest
    qml6-module-qtquick-dialogs qml6-module-qtqml qml6-module-qtqml-models qt6-charts-dev qml6-module-qtcharts
    qt6-l10n-tools qt6-tools-dev
    docker.io busybox-static dpkg-dev
)
PANDO_TEST_PACKAGES=(postgresql rsyslog rsyslog-gnutls python3 openssl openssh-server openssh-client xvfb trayer libxcb1-dev debootstrap)

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
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

# build PRESET [TARGET...]
build() {
    local preset=$1
    shift
    say "building ($preset)"
    cmake --preset "$preset" >/dev/null || die "cmake configure failed"
    cmake --build --preset "$preset" -- "$@" || die "build failed"
}
