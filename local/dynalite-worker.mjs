// The embedded DynamoDB in its own thread, so its CPU work (leveldb, JSON) stays off the gateway's event
// loop, as a remote DynamoDB would. Plain JavaScript: worker threads do not inherit the TypeScript loader.
// Two ways in: HTTP on a loopback port (other processes, `DYNAMODB_ENDPOINT`), and a message port for the
// gateway in this process, which skips the socket round trip (the costliest part of a call on loopback)
// and dynalite's HTTP layer (headers, signature format, request id, checksum).
import { readdirSync, readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';
import { batchPut, plainPuts } from './dynalite-batch-put.mjs';
import { cacheParses } from './expression-cache.mjs';

// dynalite's own modules: its store, checks and actions serve the in-process calls without its HTTP layer.
const require = createRequire(import.meta.url);
const db = require('dynalite/db');
const validations = require('dynalite/validations');
// Expressions are parsed once per shape (see expression-cache.mjs); the parsers are the modules the checks use.
for (const parser of ['conditionParser', 'updateParser', 'projectionParser']) {
  cacheParses(require(`dynalite/db/${parser}`));
}

// LevelDB's write buffer, 4 MB by default: each log entry is about 8 KB of items and index entries, and
// every 4 MB flushed was merged again into the next level, whose keys (md5-prefixed) it all overlaps: that
// background thread took as much CPU as this one. A larger buffer merges less often (about 100 µs of CPU
// less per log entry) for up to that much more memory.
const WRITE_BUFFER_BYTES = 16 << 20;
const { ClassicLevel } = require('classic-level');
const openLevel = ClassicLevel.prototype._open;
ClassicLevel.prototype._open = function (options) {
  return openLevel.call(this, { writeBufferSize: WRITE_BUFFER_BYTES, ...options });
};

/**
 * This thread runs below the request path (`workerData.nice`, `GATEWAY_STORE_NICE`). Under load most of
 * its work is the log entries and counters written after replies, and on a machine with fewer cores than
 * busy threads the scheduler gave it an equal share beside the gateway's own thread, which then waited for
 * a core with requests in hand. A call a request waits on still runs here, at once when that request's
 * thread is waiting for it: the waiting thread leaves its core. On Linux a thread's priority is its own
 * (`setpriority` of its thread id); elsewhere, or refused, the thread keeps its priority. Undefined then.
 */
function lowerPriority(nice) {
  if (!nice) return undefined;
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(threadId, nice);
    return { threadId, nice: getPriority(threadId) };
  } catch {
    return undefined;
  }
}
const storeThread = lowerPriority(workerData.nice);

/**
 * LevelDB compacts in a thread of its own, one per process, made by the first write that needs it: a job
 * on libuv's thread pool, whose threads the process made at start, at the gateway's priority. Under load
 * at concurrency 16 that thread took 6-8% of the gateway's CPU, at nice 0 beside the gateway's own
 * thread. No thread is made later in this process but that one (the pool, V8's and this thread were
 * there before the store opened; the inspector's, if a debugger is asked for later, would be lowered
 * too, harmlessly), so each thread that appears after this point gets this thread's priority, checked
 * once a second. The pool itself keeps its priority: the gateway's own thread uses it too (file reads, a
 * provider's address when a connection opens). Gives a function that checks once more and returns the
 * threads lowered so far.
 */
function lowerLaterThreads(nice) {
  if (!storeThread) return () => [];
  const tasks = () => readdirSync('/proc/self/task').map(Number);
  let known;
  try {
    known = new Set(tasks());
  } catch {
    return () => [];
  }
  const lowered = [];
  const check = () => {
    try {
      for (const threadId of tasks()) {
        if (known.has(threadId)) continue;
        known.add(threadId);
        setPriority(threadId, nice);
        lowered.push(threadId);
      }
    } catch {
      // A thread that ended between the listing and the call; the next check goes on.
    }
  };
  setInterval(check, 1000).unref();
  return () => {
    check();
    return [...lowered];
  };
}
const laterThreads = lowerLaterThreads(workerData.nice);

// The store dynalite makes for its HTTP server is the one the message port serves too.
let store;
const createStore = db.create;
db.create = (options) => {
  store = createStore(options);
  return store;
};
const server = dynalite(workerData.options);
db.create = createStore;
readOnThisThread(store.db);
writeTogether(store.db);
cacheTables(store);
const port = workerData.port;

/**
 * On disk, each write was its own job on the thread pool and its own leveldb write. Writes started in one
 * turn of this thread's loop (the items and index entries of the calls that arrived together) now go as
 * one leveldb batch, in the order they were made; each caller's promise settles with the batch.
 */
function writeTogether(level) {
  if (level.constructor.name === 'MemoryLevel') return;
  const batch = level._batch.bind(level);
  let pending;
  const flush = () => {
    const { operations, waiters } = pending;
    pending = undefined;
    batch(operations, {}).then(
      () => {
        for (const w of waiters) w.resolve();
      },
      (error) => {
        for (const w of waiters) w.reject(error);
      },
    );
  };
  const join = (operations) =>
    new Promise((resolve, reject) => {
      if (!pending) {
        pending = { operations: [], waiters: [] };
        setImmediate(flush);
      }
      pending.operations.push(...operations);
      pending.waiters.push({ resolve, reject });
    });
  level._put = (key, value) => join([{ type: 'put', key, value }]);
  level._del = (key) => join([{ type: 'del', key }]);
  level._batch = (operations) => join(operations);
}

/**
 * On disk (classic-level), a read is a job on libuv's thread pool and a hop back, costlier than the read
 * itself: the block cache and memtable answer most of them. Reads are done on this thread instead. Writes
 * still go to the pool, and dynalite holds an item's lock until its write is done, so a read never misses
 * a write it must see.
 */
function readOnThisThread(level) {
  if (!level.supports?.getSync || typeof level._getSync !== 'function') return;
  level._get = async function (key, options) {
    return this._getSync(key, options);
  };
}

/**
 * Every call read its table's description from the store and decoded it (the logs table's, with its
 * indexes, for each item of a batch write): a tenth of the thread's time. Active tables are kept decoded
 * here; any write of a description (create, update, delete, and the status changes after them) drops
 * them all. Only the table actions change a description they read, and they write it back at once.
 */
function cacheTables(store) {
  const tables = new Map();
  let generation = 0;
  const forget = () => {
    generation++;
    tables.clear();
  };
  const tableDb = store.tableDb;
  for (const method of ['put', 'del']) {
    const write = tableDb[method];
    tableDb[method] = (...args) => {
      forget();
      const done = args.at(-1);
      if (typeof done === 'function') {
        args[args.length - 1] = (...results) => {
          forget();
          done(...results);
        };
      }
      return write(...args);
    };
  }
  const getTable = store.getTable;
  store.getTable = (name, checkStatus, cb) => {
    const done = typeof checkStatus === 'function' ? checkStatus : cb;
    const cached = tables.get(name);
    if (cached) return setImmediate(done, null, cached);
    const started = generation;
    const keep = (error, table) => {
      if (!error && table?.TableStatus === 'ACTIVE' && generation === started) tables.set(name, table);
      done(error, table);
    };
    return typeof checkStatus === 'function' ? getTable(name, keep) : getTable(name, checkStatus, keep);
  };
}

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
 * `answer` is called once, with the status and the reply.
 */
function serveMessage({ target, body }, answer) {
  let data;
  try {
    data = JSON.parse(body);
  } catch {
    return answer(400, { __type: 'com.amazon.coral.service#SerializationException' });
  }
  let op;
  try {
    op = operation(target);
  } catch {
    return answer(400, { __type: 'com.amazon.coral.service#UnknownOperationException' });
  }
  const { checks } = op;
  // Log batches: puts its type check would not change (see dynalite-batch-put.mjs) skip it, and its action.
  const puts = target === 'BatchWriteItem' ? plainPuts(data) : undefined;
  try {
    if (!puts) data = validations.checkTypes(data, checks.types);
    validations.checkValidations(data, checks.types, checks.custom, store);
  } catch (error) {
    if (error.statusCode) return answer(error.statusCode, error.body);
    throw error;
  }
  const run = puts ? (s, d, cb) => batchPut(s, d, puts, cb) : op.run;
  run(store, data, (error, result) => {
    if (error?.statusCode) return answer(error.statusCode, error.body);
    if (error) throw error;
    answer(200, result);
  });
}

/**
 * Two lanes. Calls a request waits on (reservations, reads, settlements) start as they arrive. Background
 * calls (log entries and counters written after replies, which arrive in bursts: a window's summed counters
 * at once) run one at a time beside them, so a reservation waits on at most one of them, not on a burst.
 */
const background = [];
let backgroundRunning = false;
function runBackground() {
  const call = background.shift();
  if (!call) {
    backgroundRunning = false;
    return;
  }
  backgroundRunning = true;
  serveMessage(call, (status, data) => {
    reply(call.id, status, data);
    setImmediate(runBackground);
  });
}

port?.on('message', (calls) => {
  for (const call of calls) {
    if (!call.background) serveMessage(call, (status, data) => reply(call.id, status, data));
    else background.push(call);
  }
  if (!backgroundRunning && background.length > 0) runBackground();
});
server.listen(0, '127.0.0.1', () => {
  parentPort.postMessage({ port: server.address().port, storeThread });
});
parentPort.on('message', (message) => {
  if (message === 'threads') {
    // The threads made after the store's start and lowered to its priority (LevelDB's), for tests.
    parentPort.postMessage({ loweredThreads: laterThreads() });
    return;
  }
  if (message === 'close') {
    port?.close();
    server.closeAllConnections?.();
    server.close(() => parentPort.postMessage('closed'));
  }
});
