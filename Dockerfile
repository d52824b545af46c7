# The image scripts/image.sh builds without Docker, for machines that have Docker: the production
# dependencies, the exact Node binary package.json pins, dist/ (the JavaScript `npm run build` writes
# from src/, without its tests), and the numeric non-root user 65532 on a Debian 12 base with glibc,
# libstdc++ and CA certificates but no shell. The build only erases the types: run from its sources,
# Node would strip them as it loads each module, and the stripper alone holds about 17 MiB.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm install --ignore-scripts --no-audit --no-fund --loglevel=error
COPY src ./src
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json

FROM node:${NODE_VERSION}-bookworm-slim AS app
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` follows the lock (npm ci refuses it over an optional Windows-only dependency, see
# scripts/ensure-deps.sh); --ignore-scripts: the production dependencies have no install script.
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error \
  && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) -delete \
  && rm package-lock.json
COPY --from=build /build/dist ./dist

# distroless/cc: Debian 12's glibc, libgcc, libstdc++ and CA certificates, uid 65532 "nonroot", no shell.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=app /usr/local/bin/node /usr/local/bin/node
COPY --from=app /app /app
WORKDIR /app
# Two malloc arenas instead of glibc's eight per core: the threads of V8 and libuv each got one, and
# each arena keeps what it freed; with 1,000 orders the operator's RSS was about 7 MiB lower. A fixed
# mmap threshold of 128 KiB: glibc otherwise raises it after each large block freed (a list's answer,
# a burst's buffers), so later ones come from the heap and stay resident; 8 to 25 MiB lower with 1,000
# orders (docs/performance.md).
ENV NODE_ENV=production MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
USER 65532:65532
# A young generation of 1 MiB: the operator allocates little at a time, and V8's default (16 MiB semi-spaces)
# is most of its resident memory. Memory saver mode: V8 keeps the pages a garbage collection frees for
# reuse, resident, and gives them back only in a memory-reducing collection, which it never starts in a
# process that is not marked as in the background (a server never is); without it the operator's RSS
# stays at the largest heap it ever had, i.e. after its busiest burst (docs/performance.md).
# scripts/image.sh and harness/operator/operator-process.ts start it the same way.
ENTRYPOINT ["/usr/local/bin/node", "--max-semi-space-size=1", "--memory-saver-mode", "dist/main.js"]
