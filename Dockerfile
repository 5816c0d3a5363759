# zeromesh peer image: `docker build -t zeromesh .` then see deploy/kubernetes/ and the README
# ("Containers and Kubernetes"). Two stages: dependencies are installed in the first, and only
# the runtime files reach the second, which runs as the unprivileged `node` user (uid 1000).
FROM node:20.20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20.20-bookworm-slim
ENV NODE_ENV=production
# glibc's allocator told to give memory back, as bin/zeromesh.js does when run as a command
# (README, "Memory"): without these a burst of large requests left the peer hundreds of MB up.
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768 MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json index.js index.d.ts ./
COPY protocol ./protocol
COPY runtime ./runtime
COPY transport ./transport
COPY peer ./peer
COPY client ./client
COPY ops ./ops
COPY bin ./bin
COPY demo ./demo
USER 1000:1000
# 5555: the peer's ZeroMQ socket; 9090: /metrics, /healthz, /readyz.
EXPOSE 5555 9090
# zeromesh peer handles SIGTERM itself: it leaves the cluster, drains (--drain-timeout,
# 10 s by default) and exits 0, inside Kubernetes' default 30 s grace period. Flags come from
# ZEROMESH_* variables too (ZEROMESH_SEEDS, ZEROMESH_ADVERTISE, ZEROMESH_CLUSTER_KEY...).
# A wildcard bind needs a cluster key, or --insecure on purpose.
ENTRYPOINT ["node", "bin/zeromesh.js", "peer"]
# No handlers by default: mount your module and give --handlers /app/handlers/work.js (or, to
# try the image, --demo-handlers).
CMD ["--bind", "tcp://0.0.0.0:5555", "--http", "0.0.0.0:9090"]
