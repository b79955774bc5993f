# Production image: production dependencies only, no embedded PostgreSQL (point DATABASE_URL at one),
# running as the unprivileged `node` user. Node 24 runs the TypeScript sources directly.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/patch-dependencies.ts ./scripts/
# Optional dependencies are the embedded PostgreSQL binaries, which the image does not use; no
# production dependency needs an install script. The project's own fixes to dependencies are
# applied explicitly (scripts/patch-dependencies.ts; `postinstall` elsewhere).
RUN npm ci --omit=dev --omit=optional --ignore-scripts && node scripts/patch-dependencies.ts && npm cache clean --force

FROM node:24-bookworm-slim
# A process run as PID 1 has no default action for SIGTERM: until Node has loaded the service and set
# its handlers (about a second), a `docker stop` would be ignored and end in a SIGKILL ten seconds
# later. tini is PID 1 instead, forwards signals and reaps children.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production PORT=4000 HOST=0.0.0.0
# V8 sizes its heap for the machine's memory, not for what the service holds (about 60 MB live under
# load): young-generation semispaces of 64 MB and an old generation left to grow fourfold before it
# is collected. These hold the resident set under 250 MB under load instead of about 430, at the
# same throughput (bench/FINDINGS.md, "Memory"). The old-space figure is a ceiling that also sets how eagerly
# V8 collects; lower it to about three quarters of a container's memory when that is under 2 GB.
# Set NODE_OPTIONS at run time to replace them.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=1536"
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json mikro-orm.config.ts ./
COPY schema ./schema
COPY src ./src
USER node
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrations run at start; SIGTERM drains requests before exiting.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "src/main.ts"]
