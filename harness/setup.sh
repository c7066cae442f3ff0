#!/usr/bin/env bash
# Installs whatever satbench needs and is missing, then stays quiet.
# Run by `npm run bench` and `npm test` before anything else, so that the
# README's two commands are the whole set-up on a fresh Debian 12 (as root).
# When everything is present this takes a second or two.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf 'satbench setup: %s\n' "$*" >&2; }

# --- system packages -------------------------------------------------------
# chromium: the browser; iproute2: ip netns/veth/tuntap/tc; nftables: the
# split-TCP PEP's TPROXY rules; iperf3: TCP bulk transfers; iputils-ping and
# ethtool: checks and offload settings; fonts: so pages paint text;
# dnsmasq-base: the DNS server of a replayed site archive; python3-venv:
# the venv of the CONNECT-UDP interop test's client (aioquic); libyaml and
# libssl: what the unpacked H2O below links against; curl,
# cmake, g++, make, patch, pkg-config, libssl-dev, zlib1g-dev: to fetch and build
# H2O with HTTP/3.
apt_packages=(chromium iproute2 nftables iperf3 iputils-ping ethtool procps
              ca-certificates fonts-liberation libyaml-0-2 libssl3 openvpn
              dnsmasq-base python3 python3-venv curl cmake g++ make patch pkg-config libssl-dev zlib1g-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Rust: Debian 12's own cargo is 1.63, too old for this workspace (its
# Cargo.lock is version 4, and its crates need edition 2024's compilers);
# Debian also ships a current toolchain, the one it builds its browsers
# with: cargo-web and rustc-web, with clippy and rustfmt (the lint step's).
rust_min=1.85
rust_packages=(cargo-web rust-web-clippy rustfmt-web)
cargo_version() { cargo --version 2>/dev/null | awk '{print $2}'; }
cargo_new_enough() {
  local v; v=$(cargo_version)
  [[ -n $v ]] && [[ $(printf '%s\n%s\n' "$rust_min" "${v%%-*}" | sort -V | head -1) == "$rust_min" ]]
}
rust_tools_ok() { cargo_new_enough && cargo clippy --version >/dev/null 2>&1 && cargo fmt --version >/dev/null 2>&1; }
if ! rust_tools_ok; then missing+=("${rust_packages[@]}"); fi
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    say "missing system packages: ${missing[*]}; run this as root (sudo npm test) or install them with apt-get"
    exit 2
  fi
  say "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if ! rust_tools_ok; then
  say "cargo $(cargo_version || true) at $(command -v cargo || echo '(none)') is older than $rust_min or lacks clippy or rustfmt; put a newer toolchain first on PATH (rustup, or Debian's cargo-web, rust-web-clippy, rustfmt-web)"
  exit 2
fi

# --- H2O, the second origin server (--origin h2o) -----------------------------
# Debian's 2.2.5, unpacked into .tools/h2o instead of installed (the package
# would also enable a system-wide h2o service on port 80): h1, h1s and h2,
# and the fallback when the H2O below cannot be built.
h2o_bin="$root/.tools/h2o/usr/bin/h2o"
if [[ ! -x $h2o_bin ]]; then
  say "unpacking Debian's h2o package into .tools/h2o"
  tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download -qq h2o >&2 2>/dev/null); then
    [[ $(id -u) -eq 0 ]] && apt-get update -qq >&2
    (cd "$tmp" && apt-get download -qq h2o >&2) || { say "could not download the h2o package"; rm -rf "$tmp"; exit 2; }
  fi
  mkdir -p .tools/h2o
  dpkg-deb -x "$tmp"/h2o_*.deb .tools/h2o
  rm -rf "$tmp"
fi

# H2O with HTTP/3 (quicly), the origin of Kosek et al.'s matrix, built once
# into .tools/h2o-quic from the pinned commit, as it is (bin/h2o) and with
# sites/origin/h2o-accept-hashkey-iv.patch (bin/h2o-patched: only one file
# recompiles). The source is the tarball
# named by SATBENCH_H2O_SOURCE, else GitHub's archive of the commit. When
# neither can be had, one line says so and --origin h2o stays Debian's
# (no h3); the attempt is not repeated for a day.
h2o_commit=edd7a120bfc4af11ac0cbebce2a43cc1f93f9af1
h2o_patch="$root/sites/origin/h2o-accept-hashkey-iv.patch"
h2o_stamp="$h2o_commit $(sha256sum "$h2o_patch" | cut -d' ' -f1)"
h2o_quic="$root/.tools/h2o-quic"
h2o_unavailable="$root/.tools/h2o-quic.unavailable"
if [[ $(cat "$h2o_quic/BUILT" 2>/dev/null) != "$h2o_stamp" ]] &&
   { [[ -n ${SATBENCH_H2O_SOURCE:-} ]] || [[ ! -f $h2o_unavailable ]] ||
     [[ -n $(find "$h2o_unavailable" -mmin +1440) ]]; }; then
  tmp=$(mktemp -d)
  src=""
  if [[ -n ${SATBENCH_H2O_SOURCE:-} ]]; then
    [[ -f $SATBENCH_H2O_SOURCE ]] || { say "SATBENCH_H2O_SOURCE: $SATBENCH_H2O_SOURCE is not a file (expected H2O's source at commit $h2o_commit as .tar.gz)"; rm -rf "$tmp"; exit 2; }
    src=$SATBENCH_H2O_SOURCE
  elif curl -fsSL --connect-timeout 20 --max-time 600 -o "$tmp/h2o.tar.gz" \
         "https://github.com/h2o/h2o/archive/$h2o_commit.tar.gz" 2>/dev/null; then
    src="$tmp/h2o.tar.gz"
  fi
  if [[ -z $src ]]; then
    mkdir -p .tools && : > "$h2o_unavailable"
    say "H2O with HTTP/3 not built: github.com unreachable and SATBENCH_H2O_SOURCE unset; --origin h2o is Debian's 2.2.5 (no h3)"
  else
    say "building H2O $h2o_commit with HTTP/3 into .tools/h2o-quic (once)"
    tar -xzf "$src" -C "$tmp"
    tree="$tmp/h2o-$h2o_commit"
    [[ -f $tree/CMakeLists.txt ]] || { say "$src is not H2O at commit $h2o_commit (no h2o-$h2o_commit/CMakeLists.txt in it)"; rm -rf "$tmp"; exit 2; }
    log="$root/.tools/h2o-quic-build.log"
    if ! (cd "$tree" && cmake -S . -B build -DWITH_MRUBY=OFF -DCMAKE_BUILD_TYPE=Release &&
          make -C build -j"$(nproc)" h2o && cp build/h2o "$tmp/h2o" &&
          patch -p1 < "$h2o_patch" && make -C build -j"$(nproc)" h2o) > "$log" 2>&1; then
      say "building H2O failed; the last lines of $log:"; tail -n 20 "$log" >&2; rm -rf "$tmp"; exit 2
    fi
    # H2O finds share/h2o (its helper scripts) through H2O_ROOT, the folder above bin/.
    rm -rf "$h2o_quic" && mkdir -p "$h2o_quic/bin" "$h2o_quic/share"
    cp "$tmp/h2o" "$h2o_quic/bin/h2o"
    cp "$tree/build/h2o" "$h2o_quic/bin/h2o-patched"
    cp -r "$tree/share/h2o" "$h2o_quic/share/h2o"
    echo "$h2o_stamp" > "$h2o_quic/BUILT"
    rm -f "$h2o_unavailable" "$log"
  fi
  rm -rf "$tmp"
fi

# --- Node.js ---------------------------------------------------------------
# puppeteer-core and Lighthouse need Node >= 22.19. Where the system's is
# older, install Node 24 from the npm registry's `node` package into .tools/.
need_major=22 need_minor=19
node_ok() {
  local v; v=$("$1" -p 'process.versions.node' 2>/dev/null) || return 1
  local major=${v%%.*} rest=${v#*.}; local minor=${rest%%.*}
  (( major > need_major || (major == need_major && minor >= need_minor) ))
}
local_node="$root/.tools/node/node_modules/node/bin/node"
if ! node_ok node; then
  if ! node_ok "$local_node"; then
    say "system Node.js $(node --version 2>/dev/null || echo absent) is older than $need_major.$need_minor; installing Node 24 into .tools/node"
    mkdir -p .tools/node
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix .tools/node node@24 >&2
    node_ok "$local_node" || { say "Node 24 did not install into .tools/node"; exit 2; }
  fi
  export PATH="$(dirname "$local_node"):$PATH"
fi

# --- npm dependencies --------------------------------------------------------
# npm ci only when package-lock.json changed since the last install.
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
stamp=node_modules/.satbench-lock-sha256
if [[ ! -f $stamp || $(cat "$stamp") != "$lock_sum" ]]; then
  say "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$lock_sum" > "$stamp"
fi

# --- aioquic, the HTTP/3 client we did not write ------------------------------
# The CONNECT-UDP interop test (test/integration/masque-interop.test.js) drives
# Proxy-GW with aioquic from PyPI, pinned, in a venv of its own in .tools/.
aioquic_version=1.7.2
aioquic_venv="$root/.tools/aioquic"
if [[ $(cat "$aioquic_venv/PINNED" 2>/dev/null) != "$aioquic_version" ]]; then
  say "installing aioquic $aioquic_version into .tools/aioquic (a Python venv)"
  rm -rf "$aioquic_venv"
  python3 -m venv "$aioquic_venv" >&2
  "$aioquic_venv/bin/pip" install --quiet --disable-pip-version-check "aioquic==$aioquic_version" >&2 ||
    { say "pip could not install aioquic==$aioquic_version into .tools/aioquic"; exit 2; }
  echo "$aioquic_version" > "$aioquic_venv/PINNED"
fi

# --- Rust workspace ----------------------------------------------------------
# cargo itself decides what is stale; a no-op build takes well under a second.
# A build that is not one is silent for minutes under --quiet: say so first.
# shellcheck source=harness/rust-build-note.sh
source "$root/harness/rust-build-note.sh"
note=$(rust_build_note "$root")
[[ -n $note ]] && say "$note"
cargo build --release --workspace --quiet >&2
