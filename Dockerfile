# One image for the worker, the webhook bridge and the codec endpoint (the compose file and the
# chart pick the command; the operator CLI runs in it too: `node dist/starter/cli.js …`). The
# provider sandbox is a test double and not in it: it has its own target (`--target sandbox`),
# which docker-compose.yml's sandbox profile builds. Stages: the TypeScript is compiled and the
# workflow bundle built at image build time; the runtime stage holds compiled JavaScript, the
# bundle and production dependencies only, and runs as the non-root `node` user.
# `npm run dist-check` proves this runtime stage without a container engine (README, "The image").

# Node 24, the current LTS (Node 20 reached end of life in April 2026).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# --- build: compile, bundle ---------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.sandbox.json ./
COPY src ./src
# dist/ mirrors src/ without src/sandbox; the bundle is what every worker of the image runs
# (WORKFLOW_BUNDLE_PATH below), so a worker starts without webpack and all replicas run
# byte-identical workflow code. The traced bundle (OpenTelemetry's workflow interceptors) is for
# workers with OTEL_EXPORTER_OTLP_ENDPOINT set. Beside each, bundle.js writes the Nexus worker's own
# (`.nexus.js`: the onboarding relay alone, src/fleet/nexus-bundle.ts). dist-sandbox/ is the sandbox target's.
RUN npx tsc -p tsconfig.build.json \
 && node dist/fleet/bundle.js dist/workflow-bundle.js \
 && node dist/fleet/bundle.js --tracing dist/workflow-bundle-traced.js \
 && npx tsc -p tsconfig.sandbox.json

# --- production dependencies only -------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The worker's native core (@temporalio/core-bridge) ships prebuilt for linux x64/arm64 glibc: no toolchain needed.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- the provider sandbox (docker compose --profile sandbox; never deployed against the provider) --
FROM ${NODE_IMAGE} AS sandbox
WORKDIR /app
ENV NODE_ENV=production LISTEN_HOST=0.0.0.0 HEALTHCHECK_URL=http://127.0.0.1:4010/sandbox/health
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist-sandbox ./dist
USER node
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/sandbox/server.js"]

# --- runtime (the default target) ---------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    LISTEN_HOST=0.0.0.0 \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    METRICS_PORT=9464 \
    HEALTHCHECK_URL=http://127.0.0.1:9464/health
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's build ID is its workers' Worker Deployment Version (docs/versioning.md): an image built
# with another BUILD_ID is another version, and pinned flows stay on the workers of the image they
# started on. Declared this late, so a new BUILD_ID rebuilds no layer above. `dev` (one version for
# every local build) unless the build says otherwise: `docker build --build-arg BUILD_ID=<tag or commit>`.
# A build ID the worker would refuse (src/config.ts) fails the build instead of every container.
ARG BUILD_ID=dev
RUN [ ${#BUILD_ID} -ge 1 ] && [ ${#BUILD_ID} -le 100 ] && [ "$(printf '%s' "$BUILD_ID" | tr -d 'A-Za-z0-9_.+-' | wc -c)" -eq 0 ] \
 || { echo "BUILD_ID \"$BUILD_ID\": must be 1-100 characters of [A-Za-z0-9_.+-] (TEMPORAL_WORKER_BUILD_ID)" >&2; exit 1; }
LABEL org.opencontainers.image.version="${BUILD_ID}"
ENV TEMPORAL_WORKER_BUILD_ID=${BUILD_ID}
USER node
# Liveness of whichever process runs: the worker and the bridge serve /health on METRICS_PORT;
# the codec endpoint sets HEALTHCHECK_URL to its own /health (docker-compose.yml).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/worker.js"]
