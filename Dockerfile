# syntax=docker/dockerfile:1
# kreload container image. Build: docker build -t kreload:$(npm pkg get version | tr -d '"') \
#   --build-arg VERSION=$(npm pkg get version | tr -d '"') .
# Without a container engine, `npm run image` builds the same runtime stage from Debian packages
# (scripts/image.sh; docs/adr/0025-image-build-and-values-compatibility.md).
# The runtime stage runs as UID 65532 with a read-only root filesystem (the chart mounts /tmp).
ARG NODE_IMAGE=node:24-slim
# glibc, libgcc, libstdc++, CA certificates and a nonroot (65532) user; no shell, no package manager.
ARG BASE_IMAGE=gcr.io/distroless/cc-debian12:nonroot

# Compiles TypeScript and bundles it (rolldown) with the locked dev dependencies. --ignore-scripts skips the `node` package's
# download of a second Node binary: the image's Node 24 builds and runs kreload.
# dist/ imports only Node's built-ins (docs/adr/0040-ship-a-bundle.md), so no node_modules is shipped;
# of dist/, only the kubectl plugin's entry is never imported by dist/main.js.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json rolldown.config.ts ./
COPY src ./src
RUN npm run build && rm dist/kubectl-kreload.js
# Node's release binary carries debug symbols (about 18 MB) that nothing at run time reads.
RUN apt-get update && apt-get install -y --no-install-recommends binutils \
 && strip -o /node /usr/local/bin/node

FROM ${BASE_IMAGE} AS runtime
ARG BASE_IMAGE
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="kreload" \
      org.opencontainers.image.description="Rolls Kubernetes workloads when the ConfigMaps, Secrets and CSI secrets they use change; a drop-in replacement for stakater/Reloader" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    HOME=/tmp
COPY --from=build --chown=0:0 /node /usr/local/bin/node
WORKDIR /app
COPY --from=build --chown=0:0 /app/dist ./dist
# package.json makes dist/*.js ES modules and gives `kreload --version` its version.
COPY --chown=0:0 package.json LICENSE ./
USER 65532:65532
EXPOSE 9090
# Node is PID 1 and receives SIGTERM directly; kreload drains and releases its Lease on it.
ENTRYPOINT ["node", "dist/main.js"]
