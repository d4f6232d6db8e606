#!/usr/bin/env bash
# Runs a go command on this module with Debian's Go packages and no module proxy:
#   clients/go/go-offline.sh build -o /tmp/kubemoot-example ./cmd/example
#   clients/go/go-offline.sh vet ./...
# Debian installs grpc and protobuf as GOPATH sources under /usr/share/gocode, not as a module
# cache, so this builds in GOPATH mode: a throwaway GOPATH holds a link to this folder under
# the module's import path, and /usr/share/gocode comes after it. Online, plain `go` with
# go.mod works instead (after `go mod tidy`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
module="kubemoot-scheduler/clients/go"
debian="${KUBEMOOT_GOCODE:-/usr/share/gocode}"

command -v go >/dev/null 2>&1 || {
  echo "go-offline.sh: 'go' is not installed: apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev" >&2
  exit 127
}
[ -d "$debian/src/google.golang.org/grpc" ] || {
  echo "go-offline.sh: $debian/src/google.golang.org/grpc is missing: apt-get install golang-google-grpc-dev golang-google-protobuf-dev" >&2
  exit 127
}

gopath="$(mktemp -d "${TMPDIR:-/tmp}/kubemoot-gopath.XXXXXX")"
trap 'rm -rf "$gopath"' EXIT
mkdir -p "$gopath/src/$(dirname "$module")"
ln -s "$here" "$gopath/src/$module"
# Relative paths in the arguments (e.g. -o) are taken from this folder, as for `cd clients/go`.
cd "$gopath/src/$module"
export PWD="$gopath/src/$module"
export GO111MODULE=off GOPATH="$gopath:$debian" GOPROXY=off GOFLAGS= GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/kubemoot-gocache}"
go "$@"
