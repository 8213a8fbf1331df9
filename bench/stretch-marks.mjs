import dc from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

// Loaded with `--import` into a server the profile bench measures (bench/profile.ts): the first SIGUSR2
// starts a CPU profile and the marks of Node's HTTP diagnostics channels, the second stops both and
// writes them to `BENCH_STRETCH_DIR` (profile.json, marks.json), for bench/request-stretches.ts, sampling
// every `BENCH_STRETCH_SAMPLE_US`. Plain JavaScript: on Node 20 a module given to `--import` after tsx is
// not compiled by it.

const dir = process.env.BENCH_STRETCH_DIR;
if (!dir) throw new Error('stretch-marks: BENCH_STRETCH_DIR is not set');
const SAMPLE_US = Number(process.env.BENCH_STRETCH_SAMPLE_US);
if (!(SAMPLE_US > 0)) throw new Error('stretch-marks: BENCH_STRETCH_SAMPLE_US is not a positive number');

/** @type {Array<[import('./request-stretches').MarkKind, number]>} */
const marks = [];
let recording = false;
/** @param {import('./request-stretches').MarkKind} kind */
const mark = (kind) => () => {
  if (recording) marks.push([kind, Number(process.hrtime.bigint() / 1000n)]);
};
// Published when the server has a request's headers, when the client request to the upstream has been
// handed to its socket, when the upstream's reply headers are parsed, and when the reply has gone.
dc.subscribe('http.server.request.start', mark('request'));
dc.subscribe('http.client.request.start', mark('upstream request'));
dc.subscribe('http.client.response.finish', mark('upstream reply'));
dc.subscribe('http.server.response.finish', mark('reply'));

const session = new Session();
session.connect();
process.on('SIGUSR2', () => {
  void (async () => {
    if (!recording) {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: SAMPLE_US });
      await session.post('Profiler.start');
      recording = true;
      writeFileSync(join(dir, 'started'), '');
      return;
    }
    recording = false;
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, 'profile.json'), JSON.stringify(profile));
    writeFileSync(join(dir, 'marks.json'), JSON.stringify(marks));
  })();
});
