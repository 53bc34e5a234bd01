// Starts a temba server (npm package `temba`, in memory) from a JSON config written by backends.py:
// {"module": file URL of temba's index.js, "port", "resources", "schemas": {resource: {post, put, patch}}}.
import { readFileSync } from 'node:fs';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { create } = await import(config.module);
const temba = await create({
  port: config.port,
  resources: config.resources,
  schemas: config.schemas,
  openapi: false,
});
// temba's own start() listens on every interface; the harness keeps to loopback.
temba.server.listen(config.port, '127.0.0.1');
