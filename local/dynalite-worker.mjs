// The embedded DynamoDB in its own thread, so its CPU work (leveldb, JSON) stays off the gateway's event
// loop, as a remote DynamoDB would. Plain JavaScript: worker threads do not inherit the TypeScript loader.
// Two ways in: HTTP on a loopback port (other processes, `DYNAMODB_ENDPOINT`), and a message port for the
// gateway in this process, which skips the socket round trip (the costliest part of a call on loopback)
// and dynalite's HTTP layer (headers, signature format, request id, checksum).
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

// dynalite's own modules: its store, checks and actions serve the in-process calls without its HTTP layer.
const require = createRequire(import.meta.url);
const db = require('dynalite/db');
const validations = require('dynalite/validations');

// The store dynalite makes for its HTTP server is the one the message port serves too.
let store;
const createStore = db.create;
db.create = (options) => {
  store = createStore(options);
  return store;
};
const server = dynalite(workerData.options);
db.create = createStore;
const port = workerData.port;

// Replies that are ready go back together: one message per turn, however many calls finished in it.
let replies = [];
const sendReplies = () => {
  const batch = replies;
  replies = [];
  port.postMessage(batch);
};
function reply(id, status, data) {
  if (replies.length === 0) setImmediate(sendReplies);
  replies.push({
    id,
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify(data),
  });
}

const operations = new Map();
/** The checks and the action of an operation (`UpdateItem`), as dynalite's HTTP handler runs them. */
function operation(target) {
  let op = operations.get(target);
  if (!op) {
    const name = validations.toLowerFirst(target);
    op = { checks: require(`dynalite/validations/${name}`), run: require(`dynalite/actions/${name}`) };
    operations.set(target, op);
  }
  return op;
}

/**
 * Runs one call as dynalite's HTTP handler would after its transport checks (content type, signature
 * present, size): parse, type checks, validations, action. Errors keep DynamoDB's shape and status.
 */
function serveMessage({ id, headers, body }) {
  const target = (headers['x-amz-target'] ?? '').split('.')[1] ?? '';
  let data;
  try {
    data = JSON.parse(body);
  } catch {
    return reply(id, 400, { __type: 'com.amazon.coral.service#SerializationException' });
  }
  let op;
  try {
    op = operation(target);
  } catch {
    return reply(id, 400, { __type: 'com.amazon.coral.service#UnknownOperationException' });
  }
  const { checks, run } = op;
  try {
    data = validations.checkTypes(data, checks.types);
    validations.checkValidations(data, checks.types, checks.custom, store);
  } catch (error) {
    if (error.statusCode) return reply(id, error.statusCode, error.body);
    throw error;
  }
  run(store, data, (error, result) => {
    if (error?.statusCode) return reply(id, error.statusCode, error.body);
    if (error) throw error;
    reply(id, 200, result);
  });
}

port?.on('message', (calls) => {
  for (const call of calls) serveMessage(call);
});
server.listen(0, '127.0.0.1', () => {
  parentPort.postMessage({ port: server.address().port });
});
parentPort.on('message', (message) => {
  if (message === 'close') {
    port?.close();
    server.closeAllConnections?.();
    server.close(() => parentPort.postMessage('closed'));
  }
});
