import { compileChecks, prepareChecks, runChecks } from '../functions/guardrails/engine';

// Added latency of ten regex/PII checks on a 4 KB prompt (target: under 1 ms), run in-process.
const problems: string[] = [];
const specs = [
  { type: 'pii', kinds: ['email'] },
  { type: 'pii', kinds: ['phone'] },
  { type: 'pii', kinds: ['credit_card'] },
  { type: 'pii', kinds: ['iban'] },
  { type: 'pii', kinds: ['ip_address'] },
  { type: 'pii', kinds: ['us_ssn', 'uk_nino', 'es_dni'] },
  { type: 'regex', pattern: 'project\\s+(?:apollo|gemini)' },
  { type: 'regex', pattern: '\\bpassword\\s*[:=]' },
  { type: 'prompt_injection' },
  { type: 'contains', words: ['confidential', 'internal only', 'do not share'] },
];
// RE2 loads when a config first names a regex check, as on a request.
await prepareChecks(specs);
const checks = compileChecks(specs, 'bench', problems);
if (problems.length) throw new Error(problems.join('; '));

const sentence =
  'The quarterly report covers revenue, churn and hiring plans across the three regions we serve. ';
const prompt = sentence.repeat(Math.ceil(4096 / sentence.length)).slice(0, 4096);

const runs = 5000;
for (let i = 0; i < 500; i++) await runChecks(checks, [prompt], { direction: 'input' });
const times: number[] = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  await runChecks(checks, [prompt], { direction: 'input' });
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const at = (p: number) => (times[Math.floor((p / 100) * times.length)] ?? 0).toFixed(3);
console.log(
  `ten regex/PII checks on a 4 KB prompt, ${runs} runs: p50 ${at(50)} ms, p99 ${at(99)} ms (target: under 1 ms)`,
);

// Linear time: each built-in check on 1 MB prompts made to hurt a backtracking engine (target: under
// 50 ms each), and hostile caller patterns on 1 MB (target: under 100 ms). The slowest shape is reported.
const MB = 1_000_000;
const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
const shapes: Record<string, string> = {
  prose: fill(sentence),
  'one long word': fill('a'),
  'digits and spaces': fill('1 '),
  'at signs': fill('a@'),
  'dotted words': fill('a.'),
  'url-like': fill('http://a'),
  'ignore and spaces': `ignore${' '.repeat(MB - 6)}`,
};

/**
 * The best of three runs after a warm-up, in CPU time (ms): what the code costs, not how long it waited
 * for a core on a machine shared with other processes. Wall time is the same on an idle machine.
 */
function bestOf(run: () => unknown): number {
  run();
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

function slowest(run: (text: string) => unknown): { ms: number; shape: string } {
  let worst = { ms: 0, shape: '' };
  for (const [shape, text] of Object.entries(shapes)) {
    const ms = bestOf(() => run(text));
    if (ms > worst.ms) worst = { ms, shape };
  }
  return worst;
}

const builtIns: Array<[string, Record<string, unknown>]> = [
  ...['email', 'phone', 'credit_card', 'iban', 'ip_address', 'us_ssn', 'uk_nino', 'es_dni'].map(
    (kind): [string, Record<string, unknown>] => [`pii ${kind}`, { type: 'pii', kinds: [kind] }],
  ),
  ['prompt_injection', { type: 'prompt_injection' }],
  ['urls', { type: 'urls', denied_domains: ['evil.example'] }],
  ['contains', { type: 'contains', words: ['confidential', 'internal only', 'a a'] }],
];
const builtInRows: string[] = [];
for (const [name, config] of builtIns) {
  const [check] = compileChecks([config], 'bench', problems);
  if (!check) throw new Error(problems.join('; '));
  const worst = slowest((text) => check.check.run(text, check.params, { direction: 'input' }));
  builtInRows.push(`${name} ${worst.ms.toFixed(1)} ms (${worst.shape})`);
}
console.log(
  `built-in checks on 1 MB, CPU time, slowest shape each (target: under 50 ms): ${builtInRows.join('; ')}`,
);

const hostile: Array<[string, string, string]> = [
  ['(a+)+$', '(a+)+$', `${'a'.repeat(MB - 1)}!`],
  ['(a|aa)+b', '(a|aa)+b', 'a'.repeat(MB)],
  ['^(.*a){12}$', '^(.*a){12}$', `${'a'.repeat(MB - 1)}b`],
  ['(\\w+\\s?)+$', '(\\w+\\s?)+$', `${fill('ab ')}!`],
];
const hostileRows: string[] = [];
for (const [name, pattern, text] of hostile) {
  const [check] = compileChecks([{ type: 'regex', pattern }], 'bench', problems);
  if (!check) throw new Error(problems.join('; '));
  const ms = bestOf(() => check.check.run(text, check.params, { direction: 'input' }));
  hostileRows.push(`${name} ${ms.toFixed(1)} ms`);
}
console.log(`hostile caller patterns on 1 MB, CPU time (target: under 100 ms): ${hostileRows.join('; ')}`);
