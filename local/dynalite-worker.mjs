// The embedded DynamoDB in its own thread, so its CPU work (leveldb, JSON) stays off the gateway's event
// loop, as a remote DynamoDB would. Plain JavaScript: worker threads do not inherit the TypeScript loader.
// Two ways in: HTTP on a loopback port (other processes, `DYNAMODB_ENDPOINT`), and a message port for the
// gateway in this process, which skips the socket round trip (the costliest part of a call on loopback).
import { EventEmitter } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

const server = dynalite(workerData.options);
const [serveHttp] = server.listeners('request');
const port = workerData.port;

// Replies that are ready go back together: one message per turn, however many calls finished in it.
let replies = [];
const sendReplies = () => {
  const batch = replies;
  replies = [];
  port.postMessage(batch);
};

// The gateway does not sign calls to its own store; dynalite only checks that a signature is there.
const UNSIGNED = {
  authorization:
    'AWS4-HMAC-SHA256 Credential=local/20000101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
  'x-amz-date': '20000101T000000Z',
};

/** Runs one call through dynalite's own HTTP handler, with the request and reply kept in memory. */
function serveMessage({ id, method, path, headers, body }) {
  const req = Object.assign(new EventEmitter(), {
    method,
    url: path,
    headers: headers.authorization ? headers : { ...headers, ...UNSIGNED },
  });
  const replyHeaders = {};
  const res = {
    statusCode: 200,
    setHeader: (name, value) => {
      replyHeaders[name.toLowerCase()] = String(value);
    },
    end: (text) => {
      if (replies.length === 0) setImmediate(sendReplies);
      replies.push({ id, status: res.statusCode, headers: replyHeaders, body: text ?? '' });
    },
  };
  serveHttp(req, res);
  if (body) req.emit('data', Buffer.from(body));
  req.emit('end');
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
