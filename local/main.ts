import { DataDirInUseError } from './data-dir-lock';
import { startGateway } from './server';

// `npm start`: the gateway on a laptop, no AWS account needed.
const gateway = await startGateway().catch((error: unknown) => {
  if (!(error instanceof DataDirInUseError)) throw error;
  console.error(`Cannot start: ${error.message}.`);
  process.exit(1);
});
console.log(`LLM gateway listening on ${gateway.url}  (data: ${process.env.GATEWAY_DATA_DIR})`);
console.log(`Dashboard: ${gateway.url.replace(/\/v1$/, '/dashboard')}`);
if (gateway.generatedAdminKey) {
  console.log('\nOrganisation admin key (shown once, stored only as a hash; keep it safe):');
  console.log(`  ${gateway.generatedAdminKey}\n`);
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.log('\nStopping: finishing requests in flight and writing their logs...');
    void gateway.close().then(() => {
      console.log('Stopped.');
      process.exit(0);
    });
  });
}
