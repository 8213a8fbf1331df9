import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { pipeline } from 'node:stream';

// The floor under every proxy process on this machine: each connection piped byte for byte to the
// upstream and back, without parsing HTTP at all. `bench:peer` times a first chunk through it beside the
// bare node:http hop, so what a proxy process costs here (two loopback writes, the wake-ups of a third
// process) stands apart from what node:http's parsing and framing add to it.
const upstreamPort = Number(process.argv[2]);

const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = net.connect({ host: '127.0.0.1', port: upstreamPort, noDelay: true });
  // Both directions; either side's error or close destroys the other.
  pipeline(client, upstream, client, () => undefined);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`tcp relay on ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => process.exit(0));
