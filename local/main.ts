import { useAsyncContextFrame } from './async-context-frame';

// `npm start`: the gateway on a laptop, no AWS account needed. On Node 22 it first restarts itself with
// the cheaper AsyncLocalStorage (./async-context-frame.ts), before the gateway's modules are loaded.
useAsyncContextFrame();
const { DataDirInUseError } = await import('./data-dir-lock');
const { startGateway } = await import('./server');
const gateway = await startGateway().catch((error: unknown) => {
  if (!(error instanceof DataDirInUseError)) throw error;
  console.error(`Cannot start: ${error.message}.`);
  process.exit(1);
});
console.log(`LLM gateway listening on ${gateway.url}  (data: ${process.env.GATEWAY_DATA_DIR})`);
console.log(`Dashboard: ${gateway.url.replace(/\/v1$/, '/dashboard')}`);
if (gateway.generatedAdminKey) {
  console.log('\nOrganisation admin key (shown once, stored only as a hash; keep it safe):');
  console.log(`  ${gateway.generatedAdminKey}`);
  console.log('Export it for the commands of the README:');
  console.log(`  export GATEWAY_ADMIN_KEY=${gateway.generatedAdminKey}\n`);
}

// First Ctrl-C: drain (requests in flight finish and are logged). Second: cut what is still in flight,
// naming it; the cut requests are still logged (as 499) before the process ends. Third: exit at once.
let signals = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    signals++;
    if (signals === 1) {
      console.log(
        '\nStopping: finishing requests in flight and writing their logs (Ctrl-C again to cut them)...',
      );
      void gateway.close().then(() => {
        console.log('Stopped.');
        process.exit(0);
      });
    } else if (signals === 2) {
      const cut = gateway.cutInFlight();
      console.log(
        cut.length
          ? `Cutting ${cut.length} request(s) in flight; their log entries are still written:\n${cut.map((c) => `  ${c}`).join('\n')}`
          : 'Nothing left in flight; writing the last log entries...',
      );
    } else {
      console.log('Exiting now: log entries still being written may be lost.');
      process.exit(130);
    }
  });
}
