# modelgate: build with the dev dependencies, run with the production ones only.
#   docker build -t modelgate .        (or: podman build -t modelgate .)
#   docker run -p 8080:8080 -e OPENAI_API_KEY=… -v modelgate-data:/data modelgate
# docs/deployment.md says what each step is for and what was verified.

FROM node:20-slim AS build
WORKDIR /app
COPY . .
# Every dependency, TypeScript and Vite included; the prepare script builds dist/.
RUN npm ci --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    MODELGATE_HOST=0.0.0.0 \
    MODELGATE_PORT=8080 \
    MODELGATE_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/prepare.mjs scripts/
COPY bin bin
COPY --from=build /app/dist dist
# Production dependencies only; prepare finds no TypeScript and uses the dist/ copied above.
RUN npm ci --omit=dev --workspaces=false --no-audit --no-fund && npm cache clean --force \
 && mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MODELGATE_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--v8-pool-size=1", "--max-semi-space-size=8", "bin/modelgate.js", "serve"]
