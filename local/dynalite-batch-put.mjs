// A cheaper BatchWriteItem for the embedded DynamoDB (dynalite) when a call only puts items into one table,
// the shape of the gateway's log batches: a log entry is two items and up to eight index entries, and
// dynalite's generic path was most of its thread's time under load. What is stored is what dynalite stores
// (same keys, same values, written through its own store, under its own item locks), and every error is
// dynalite's: any call outside this shape takes dynalite's path. Plain JavaScript: it runs in the worker.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const db = require('dynalite/db');

const SCALAR_TYPES = { S: 'string', N: 'string', BOOL: 'boolean', NULL: 'boolean' };

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Exactly one own key of the given name, whose value is an object. */
function only(value, key) {
  let count = 0;
  for (const k in value) {
    if (k !== key) return undefined;
    count++;
  }
  return count === 1 && isObject(value[key]) ? value[key] : undefined;
}

/**
 * Whether dynalite's type check would give back this attribute value unchanged: one type of those a log
 * item uses, with a value of the JSON type it expects. Anything else (binary, nulls, several types, a key
 * `__proto__`, which its copy would turn into a prototype) is left to the type check and its errors.
 */
function plainValue(value) {
  if (!isObject(value)) return false;
  let type;
  for (const k in value) {
    if (type !== undefined) return false;
    type = k;
  }
  const inner = value[type];
  const scalar = SCALAR_TYPES[type];
  if (scalar) return typeof inner === scalar;
  if (type === 'M') return plainMap(inner);
  if (!Array.isArray(inner)) return false;
  if (type === 'L') return inner.every(plainValue);
  if (type === 'SS' || type === 'NS') return inner.every((s) => typeof s === 'string');
  return false;
}

function plainMap(map) {
  if (!isObject(map)) return false;
  for (const k in map) if (k === '__proto__' || !plainValue(map[k])) return false;
  return true;
}

/**
 * The puts of a BatchWriteItem whose type check (`validations.checkTypes`, a deep copy of every item) would
 * change nothing: `{ RequestItems: { <one table>: [{ PutRequest: { Item } }, ...] } }` and nothing else.
 * Undefined when the call has any other shape.
 */
export function plainPuts(data) {
  const items = only(data, 'RequestItems');
  if (!items) return undefined;
  let table;
  for (const k in items) {
    if (table !== undefined) return undefined;
    table = k;
  }
  const requests = items[table];
  if (table === undefined || table === '__proto__' || !Array.isArray(requests)) return undefined;
  for (const request of requests) {
    if (!isObject(request)) return undefined;
    const put = only(request, 'PutRequest');
    if (!put || !plainMap(only(put, 'Item'))) return undefined;
  }
  return { table, requests };
}

/**
 * What dynalite computes per item for each index of a table, computed once per table: for each index its
 * key attributes and types, and the attributes its entries copy (null: the whole item).
 */
function indexPlan(table) {
  const typeOf = new Map(table.AttributeDefinitions.map((d) => [d.AttributeName, d.AttributeType]));
  const keyOf = (schema) => {
    const attrs = schema.map((k) => k.AttributeName);
    return attrs.every((a) => typeOf.has(a)) ? attrs.map((a) => [a, typeOf.get(a)]) : undefined;
  };
  const tableKey = keyOf(table.KeySchema);
  if (!tableKey) return undefined;
  const indexes = [];
  for (const kind of ['Local', 'Global']) {
    for (const index of table[`${kind}SecondaryIndexes`] ?? []) {
      const key = keyOf(index.KeySchema);
      if (!key) return undefined;
      const projected =
        index.Projection.ProjectionType === 'ALL'
          ? null
          : [
              ...new Set([
                ...key.map(([a]) => a),
                ...tableKey.map(([a]) => a),
                ...(index.Projection.NonKeyAttributes ?? []),
              ]),
            ];
      indexes.push({
        name: index.IndexName,
        prefix: `index-${kind.toLowerCase()}~${table.TableName}~${index.IndexName}~`,
        key,
        projected,
      });
    }
  }
  return { itemPrefix: `item-${table.TableName}~`, tableKey, indexes };
}

// dynalite's key pieces of a value (an md5 prefix, its hex), kept: most index keys (an organisation's
// shard, a status class, a model) recur from item to item.
const MAX_PIECES = 10_000;
const pieces = { h: new Map(), r: new Map() };
function cached(kind, make, value, type) {
  const byValue = pieces[kind];
  let forType = byValue.get(type);
  if (forType === undefined) {
    forType = new Map();
    byValue.set(type, forType);
  }
  let piece = forType.get(value);
  if (piece === undefined) {
    piece = make(value, type);
    if (forType.size >= MAX_PIECES) forType.clear();
    forType.set(value, piece);
  }
  return piece;
}
const hashPrefixOf = (value, type) => cached('h', db.hashPrefix, value, type);
const rangeStrOf = (value, type) => cached('r', db.toRangeStr, value, type);

/** `db.createKey`: the hash's md5 prefix, then each key value as a sortable string. */
function createKey(item, key) {
  const [hashAttr, hashType] = key[0];
  let out = `${hashPrefixOf(item[hashAttr][hashType], hashType)}/`;
  for (const [attr, type] of key) out += `${rangeStrOf(item[attr][type], type)}/`;
  return out;
}

/** The item's own key hash (`db.hashPrefix` of its table key), which ends each of its index keys. */
function tableHash(item, tableKey) {
  const args = [];
  for (const [attr, type] of tableKey) args.push(item[attr][type], type);
  return db.hashPrefix(...args);
}

/** `db.getIndexActions` over all of a table's indexes: the entries to write and the stale ones to delete. */
function indexActions(plan, existing, item) {
  const puts = [];
  const deletes = [];
  let itemHash;
  let existingHash;
  for (const index of plan.indexes) {
    let key = null;
    if (item && index.key.every(([a]) => item[a] != null)) {
      let value = item;
      if (index.projected) {
        value = Object.create(null);
        for (const attr of index.projected) value[attr] = item[attr];
      }
      itemHash ??= tableHash(item, plan.tableKey);
      key = createKey(value, index.key) + itemHash;
      puts.push({ type: 'put', key: index.prefix + key, value });
    }
    if (existing && index.key.every(([a]) => existing[a] != null)) {
      existingHash ??= tableHash(existing, plan.tableKey);
      const old = createKey(existing, index.key) + existingHash;
      if (old !== key) deletes.push({ type: 'del', key: index.prefix + old });
    }
  }
  return deletes.concat(puts);
}

/**
 * BatchWriteItem for the puts `plainPuts` found, after dynalite's validations, as its batchWriteItem and
 * putItem do them: every request checked first (key schema, index key types, duplicates), then each item
 * under its item lock: read the item it replaces, write its index entries (stale ones deleted) and itself,
 * here as one batch of the store. `done` is called once, with dynalite's error or its reply.
 */
export function batchPut(store, data, { table: tableName, requests }, done) {
  const finish = (error, result) => {
    if (error?.body && /Missing the key|Type mismatch for key/.test(error.body.message))
      error.body.message = 'The provided key element does not match the schema';
    done(error, result);
  };
  store.getTable(tableName, (error, table) => {
    if (error) return finish(error);
    const plan = planOf(table);
    // A key attribute without a declared type (CreateTable refuses that): dynalite's own path.
    if (!plan) return require('dynalite/actions/batchWriteItem')(store, data, done);
    const puts = [];
    const seen = new Set();
    for (const request of requests) {
      const item = request.PutRequest.Item;
      const invalid = db.validateItem(item, table);
      if (invalid != null) return finish(invalid);
      const key = createKey(item, plan.tableKey);
      if (seen.has(key)) return finish(db.validationError('Provided list of item keys contains duplicates'));
      seen.add(key);
      puts.push({ key, item });
    }
    const itemDb = store.getItemDb(tableName);
    let left = puts.length;
    let failed = false;
    for (const { key, item } of puts) {
      putOne(store, itemDb, plan, key, item, (error) => {
        if (failed) return;
        if (error) {
          failed = true;
          return finish(error);
        }
        if (--left === 0) finish(null, { UnprocessedItems: {} });
      });
    }
  });
}

/**
 * The stored item of a key: read at once where the store reads synchronously (its reads are answered from
 * its caches on this thread anyway), else through dynalite's sub-store and its errors.
 */
function readItem(store, itemDb, plan, key, cb) {
  const level = store.db;
  if (level.supports?.getSync && level.status === 'open') {
    let item;
    try {
      item = level.getSync(plan.itemPrefix + key);
    } catch {
      return itemDb.get(key, cb);
    }
    return cb(null, item);
  }
  itemDb.get(key, cb);
}

function putOne(store, itemDb, plan, key, item, cb) {
  itemDb.lock(key, (release) => {
    const done = release(cb);
    readItem(store, itemDb, plan, key, (error, existing) => {
      if (error && error.name !== 'NotFoundError') return done(error);
      const operations = indexActions(plan, existing, item);
      operations.push({ type: 'put', key: plan.itemPrefix + key, value: item });
      store.db.batch(operations, (error) => done(error ?? null));
    });
  });
}

const plans = new WeakMap();
function planOf(table) {
  let plan = plans.get(table);
  if (plan === undefined) {
    plan = indexPlan(table) ?? null;
    plans.set(table, plan);
  }
  return plan;
}
