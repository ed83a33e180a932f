#!/usr/bin/env bash
# `make k8s`: a real kube-apiserver (and the kubectl of the same release) for tests/k8s, built once per
# machine from Debian bookworm's `kubernetes` source package with Debian's Go, into a cache outside the clone
# (FORMWRIGHT_K8S_CACHE, default ~/.cache/formwright/k8s), reused when present. Every fetch goes through
# Debian's own tools (apt-get, apt-get source, dpkg-source); nothing else is downloaded.
#
# The steps, and why:
# - Debian ships the full upstream tree (1.20.2, vendor/ included) but no kube-apiserver binary package;
#   its own rules build with GOPATH mode, so this does too.
# - `make gen_openapi` first: kube-apiserver's OpenAPI definitions are generated code (rsync is needed).
# - vendored github.com/modern-go/reflect2 1.0.1 crashes on Go >= 1.18 (it reaches into the runtime's map
#   layout); Debian's golang-github-modern-go-reflect2-dev 1.0.2 replaces it.
# - kubectl comes from Debian's kubernetes-client package, unpacked into the cache (not installed: another
#   kubectl may own /usr/bin/kubectl), so client and server are one release.
# On failure the reason is written to $CACHE/unavailable, which the test fixture shows when it skips.
set -euo pipefail
CACHE="${FORMWRIGHT_K8S_CACHE:-$HOME/.cache/formwright/k8s}"
BIN="$CACHE/bin"
mkdir -p "$BIN"
rm -f "$CACHE/unavailable"
fail() { echo "$*" > "$CACHE/unavailable"; echo "make k8s: $*" >&2; exit 1; }
trap 'fail "the build stopped at line $LINENO (see the output of make k8s)"' ERR

if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kubectl" ] && command -v etcd >/dev/null 2>&1; then
  echo "make k8s: kube-apiserver and kubectl are cached in $BIN"
  exit 0
fi
[ "$(id -u)" = 0 ] || fail "building kube-apiserver needs root for apt-get (run make k8s as root once)"
command -v apt-get >/dev/null 2>&1 || fail "no apt-get: kube-apiserver is built from Debian's source package"

need="golang-go etcd-server rsync dpkg-dev golang-github-modern-go-reflect2-dev"
missing=""
for pkg in $need; do dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing="$missing $pkg"; done
if [ -n "$missing" ]; then
  echo "make k8s: installing$missing"
  apt-get install -y -qq $missing >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null; }
fi

# The source package: deb-src lines for Debian's own archive when the machine has none.
if ! apt-get source --download-only --print-uris kubernetes >/dev/null 2>&1; then
  cat > /etc/apt/sources.list.d/formwright-k8s-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -qq >/dev/null
fi
cd "$CACHE"
if [ ! -x "$BIN/kubectl" ]; then
  echo "make k8s: kubectl from Debian's kubernetes-client"
  (cd "$CACHE" && apt-get download kubernetes-client >/dev/null 2>&1)
  rm -rf "$CACHE/client" && dpkg-deb -x "$CACHE"/kubernetes-client_*.deb "$CACHE/client"
  cp "$CACHE/client/usr/bin/kubectl" "$BIN/kubectl"
fi
if [ ! -x "$BIN/kube-apiserver" ]; then
  echo "make k8s: fetching Debian's kubernetes source package"
  ls "$CACHE"/kubernetes_*.dsc >/dev/null 2>&1 || apt-get source --download-only kubernetes >/dev/null 2>&1
  rm -rf "$CACHE/src"
  dpkg-source -x "$CACHE"/kubernetes_*.dsc "$CACHE/src" >/dev/null
  rm -rf "$CACHE/src/vendor/github.com/modern-go/reflect2"
  cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$CACHE/src/vendor/github.com/modern-go/reflect2"
  mkdir -p "$CACHE/src/.go/src/k8s.io"
  ln -sfn ../../.. "$CACHE/src/.go/src/k8s.io/kubernetes"
  export GOPATH="$CACHE/src/.go" GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE="$CACHE/gocache" HOME="$CACHE/home"
  mkdir -p "$HOME"
  cd "$GOPATH/src/k8s.io/kubernetes"
  echo "make k8s: generating the OpenAPI definitions (a few minutes)"
  nice make gen_openapi >"$CACHE/gen_openapi.log" 2>&1
  echo "make k8s: building kube-apiserver (about 6 minutes on 2 cores)"
  version="v$(dpkg-parsechangelog -l debian/changelog -S Version | sed 's/.*really//; s/-.*//')"
  stamp=""
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    stamp="$stamp -X k8s.io/kubernetes/vendor/$pkg.gitVersion=$version"
    stamp="$stamp -X k8s.io/kubernetes/vendor/$pkg.gitMajor=1 -X k8s.io/kubernetes/vendor/$pkg.gitMinor=20"
  done
  nice go build -ldflags "$stamp" -o "$BIN/kube-apiserver.tmp" ./cmd/kube-apiserver
  mv "$BIN/kube-apiserver.tmp" "$BIN/kube-apiserver"
  rm -rf "$CACHE/gocache"
fi
"$BIN/kube-apiserver" --version
"$BIN/kubectl" version --client --short 2>/dev/null || "$BIN/kubectl" version --client
