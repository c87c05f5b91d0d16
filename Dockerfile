# One image for the worker, the webhook bridge, the codec endpoint and the provider sandbox; the
# compose file picks the command. Built in two stages: the TypeScript is compiled and the workflow
# bundle is built here, at image build time; the runtime stage holds compiled JavaScript, the
# bundle and production dependencies only, and runs as the non-root `node` user.

# --- build: compile, bundle ---------------------------------------------------------------------
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# dist/ mirrors src/; the bundle is what every worker of the image runs (WORKFLOW_BUNDLE_PATH below),
# so a worker starts without webpack and all replicas run byte-identical workflow code.
# The traced bundle (OpenTelemetry's workflow interceptors) is for workers with OTEL_EXPORTER_OTLP_ENDPOINT set.
RUN npx tsc -p tsconfig.build.json \
 && node dist/temporal/bundle.js dist/workflow-bundle.js \
 && node dist/temporal/bundle.js --tracing dist/workflow-bundle-traced.js

# --- runtime ------------------------------------------------------------------------------------
FROM node:20.20.2-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    LISTEN_HOST=0.0.0.0 \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js \
    METRICS_PORT=9464 \
    HEALTHCHECK_URL=http://127.0.0.1:9464/health
COPY package.json package-lock.json ./
# The worker's native core (@temporalio/core-bridge) ships prebuilt for linux x64/arm64 glibc: no toolchain needed.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
# Liveness of whichever process runs: the worker and the bridge serve /health on METRICS_PORT;
# the codec endpoint and the sandbox set HEALTHCHECK_URL to their own /health (docker-compose.yml).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/worker.js"]
