import type { GuardrailCheck } from '../types';
import { escapeRegExp, findAll, noOtherFields, stringList } from './param';

// Phrases seen in common prompt-injection and jailbreak attempts. A heuristic: it catches the
// well-known forms, not a determined attacker; pair it with the moderation check where that matters.
const BUILT_IN = [
  String.raw`ignore\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:instructions|prompts|rules|directions)`,
  String.raw`disregard\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier)\s+(?:instructions|prompts|rules)`,
  String.raw`forget\s+(?:all\s+|everything\s+)?(?:your|the)\s+(?:previous\s+)?(?:instructions|rules|training)`,
  String.raw`(?:reveal|print|show|repeat|output)\s+(?:me\s+)?(?:your|the)\s+(?:system|hidden|initial)\s+(?:prompt|instructions|message)`,
  String.raw`you\s+are\s+now\s+(?:in\s+)?(?:dan|developer\s+mode|jailbroken|unrestricted)`,
  String.raw`\bdo\s+anything\s+now\b`,
  String.raw`(?:enable|activate|enter)\s+(?:developer|god|jailbreak)\s+mode`,
  String.raw`pretend\s+(?:that\s+)?you\s+(?:have\s+no|are\s+not\s+bound\s+by)\s+(?:rules|restrictions|guidelines)`,
  String.raw`override\s+(?:your|the)\s+(?:safety|content)\s+(?:policy|policies|filters|guidelines)`,
];

export const promptInjectionCheck: GuardrailCheck<{ pattern: RegExp }> = {
  type: 'prompt_injection',
  redacts: true,
  parse(params, problems, at) {
    noOtherFields(params, ['extra_phrases'], problems, at);
    const extra = stringList(params.extra_phrases, problems, `${at}.extra_phrases`, false).map((phrase) =>
      escapeRegExp(phrase).replace(/\s+/g, '\\s+'),
    );
    return { pattern: new RegExp([...BUILT_IN, ...extra].map((p) => `(?:${p})`).join('|'), 'gi') };
  },
  run(text, { pattern }) {
    const findings = findAll(pattern, text, 'PROMPT_INJECTION');
    return findings.length === 0
      ? { passed: true }
      : { passed: false, message: `${findings.length} injection phrase(s)`, findings };
  },
};
