import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The floor of any proxy on this machine: a node:http pass-through with keep-alive and no logic at all.
// The benchmark measures it beside the gateway, so the gateway's own share of the overhead is visible.
const upstreamPort = Number(process.argv[2]);
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer({ noDelay: true }, (req, res) => {
  const out = http.request(
    { host: '127.0.0.1', port: upstreamPort, path: req.url, method: req.method, headers: req.headers, agent },
    (upstream) => {
      res.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(res);
    },
  );
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`bare proxy on ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => process.exit(0));
