# vhost-broker runs straight from its TypeScript sources on Node 24 (type stripping): no build step.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund --loglevel=error
COPY src ./src
USER node
ENTRYPOINT ["node", "src/main.ts"]
