// The embedded DynamoDB in its own thread, so its CPU work (leveldb, JSON) stays off the gateway's event
// loop, as a remote DynamoDB would. Plain JavaScript: worker threads do not inherit the TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

const server = dynalite(workerData.options);
server.listen(0, '127.0.0.1', () => {
  parentPort.postMessage({ port: server.address().port });
});
parentPort.on('message', (message) => {
  if (message === 'close') {
    server.closeAllConnections?.();
    server.close(() => parentPort.postMessage('closed'));
  }
});
