# syntax=docker/dockerfile:1
# kreload container image. Build: docker build -t kreload --build-arg VERSION=$(npm pkg get version | tr -d '"') .
# The runtime stage runs as UID 65532 with a read-only root filesystem (the chart mounts /tmp).
ARG NODE_IMAGE=node:24-slim

# Compiles TypeScript with the locked dev dependencies. --ignore-scripts skips the `node` package's
# download of a second Node binary: the image's Node 24 builds and runs kreload.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only, from the same lockfile.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ARG NODE_IMAGE
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="kreload" \
      org.opencontainers.image.description="Rolls Kubernetes workloads when the ConfigMaps, Secrets and CSI secrets they use change; a drop-in replacement for stakater/Reloader" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
# npm and corepack are not needed at run time; removing them shrinks the attack surface.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
ENV NODE_ENV=production \
    HOME=/tmp
WORKDIR /app
COPY --from=deps --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /app/dist ./dist
COPY --chown=0:0 package.json LICENSE ./
USER 65532:65532
EXPOSE 9090
# Node is PID 1 and receives SIGTERM directly; kreload drains and releases its Lease on it.
ENTRYPOINT ["node", "dist/main.js"]
