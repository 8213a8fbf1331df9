import { allowedModelsCheck } from './checks/allowed-models';
import { containsCheck } from './checks/contains';
import { jsonSchemaCheck, validJsonCheck } from './checks/json';
import { charCountCheck, sentenceCountCheck, wordCountCheck } from './checks/length';
import { moderationCheck } from './checks/moderation';
import { piiCheck } from './checks/pii';
import { promptInjectionCheck } from './checks/prompt-injection';
import { regexCheck } from './checks/regex';
import { urlsCheck } from './checks/urls';
import type { GuardrailCheck } from './types';

// Every check the gateway knows, by its `type`. A new check is a file in checks/ and a line here.
const ALL = [
  regexCheck,
  containsCheck,
  charCountCheck,
  wordCountCheck,
  sentenceCountCheck,
  validJsonCheck,
  jsonSchemaCheck,
  allowedModelsCheck,
  urlsCheck,
  piiCheck,
  promptInjectionCheck,
  moderationCheck,
] as GuardrailCheck<unknown>[];

export const CHECKS: ReadonlyMap<string, GuardrailCheck<unknown>> = new Map(ALL.map((c) => [c.type, c]));
