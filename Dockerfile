# One image for the worker, the webhook bridge, the codec endpoint and the provider sandbox:
# the compose file picks the command. tsx runs the TypeScript as in development, so the
# image runs exactly the code the tests ran.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# tsx, the SDK (with its bundler) and fastify are runtime dependencies; the test tool chain is not needed.
RUN npm ci --omit=dev && npm cache clean --force
COPY tsconfig.json ./
COPY src ./src
USER node
CMD ["npm", "run", "worker"]
