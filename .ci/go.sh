#!/usr/bin/env bash
# The Go client (clients/go): installs Debian's Go toolchain, gRPC and protobuf packages when
# missing, checks that the committed generated code matches the proto, then gofmt, go vet,
# go test and go build, offline (no module proxy: see clients/go/go-offline.sh).
# Run it before `npm test`: test/clients/go.test.ts builds the example with the same `go`.
# Needs node_modules (for `npx buf`), so run it after `npm ci`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# golang-github-golang-protobuf-1-5-dev is named on purpose: grpc accepts 1.3 or 1.5, and 1.3
# cannot marshal the APIv2 messages that protoc-gen-go generates (it panics at run time).
packages=(golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
  protobuf-compiler protoc-gen-go protoc-gen-go-grpc)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

step "go versions"
go version
protoc --version
protoc-gen-go --version
protoc-gen-go-grpc --version

step "clients/go/gen is up to date with the proto"
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
npx buf generate --template clients/go/buf.gen.yaml -o "$fresh"
if ! diff -rq "$fresh/clients/go/gen" clients/go/gen; then
  echo "clients/go/gen is stale: run 'npx buf generate --template clients/go/buf.gen.yaml' and commit" >&2
  exit 1
fi

step "gofmt"
unformatted=$(gofmt -l clients/go)
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w):" >&2
  echo "$unformatted" >&2
  exit 1
fi

step "go vet, go test, go build (clients/go)"
clients/go/go-offline.sh vet ./...
clients/go/go-offline.sh test -count=1 ./...
clients/go/go-offline.sh build -o "$fresh/example" ./cmd/example
echo "built the example ($(du -h "$fresh/example" | cut -f1))"
