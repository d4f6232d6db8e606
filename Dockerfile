# syntax=docker/dockerfile:1
# The one image of Kubemoot Scheduler: the operator (`operator`) and the injected sidecar
# (`sidecar`) are commands of the same CLI. The Helm chart (chart/values.yaml, image.*) runs it.
#
#   docker build -t ghcr.io/kubemoot/kubemoot-scheduler:0.1.0 .
#   docker run --rm ghcr.io/kubemoot/kubemoot-scheduler:0.1.0 --help

ARG NODE_IMAGE=node:24-slim

# --- build: all dependencies, TypeScript compiled to dist/ -------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Scripts off: `prepare` would build before the sources are here; none of our dependencies
# needs an install script to run (package.json allowScripts says the same).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY sidecar ./sidecar
# Only what the processes run: the benchmarks (which import test helpers) and the client
# examples stay out of the image.
RUN printf '%s' '{"extends":"./tsconfig.build.json","include":["src","sidecar"]}' > tsconfig.image.json \
 && npx tsc -p tsconfig.image.json
# The web view's page (docs/web-view.md), bundled into dist/web: the operator serves it.
COPY web ./web
RUN npx vite build --config web/vite.config.ts --logLevel warn

# --- production dependencies only ----------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime -------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# package.json marks the repository root the process resolves paths from; proto/ ships as the
# API's reference (reflection serves the compiled-in descriptors). Owned by root, read-only to `node`.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY proto ./proto
# `demo` copies the example crew and prod bundle at run time.
COPY examples ./examples
# The image's `node` user (uid 1000): the chart runs it with runAsNonRoot and a read-only root
# filesystem.
USER node
# 50051: sidecar API (gRPC, Connect, gRPC-Web, health); 11434: sidecar Ollama/OpenAI proxy;
# 8081: operator health; 9443: operator injection webhook.
EXPOSE 50051 11434 8081 9443
ENTRYPOINT ["node", "bin/kubemoot-scheduler.js"]
CMD ["--help"]
