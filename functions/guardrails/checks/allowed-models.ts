import type { GuardrailCheck } from '../types';
import { noOtherFields, stringList } from './param';

/** Input check: the request's model must be one of `models` (a trailing `*` matches a prefix). */
export const allowedModelsCheck: GuardrailCheck<{ models: string[] }> = {
  type: 'allowed_models',
  redacts: false,
  parse(params, problems, at) {
    noOtherFields(params, ['models'], problems, at);
    return { models: stringList(params.models, problems, `${at}.models`) };
  },
  run(_text, { models }, context) {
    const model = context.model ?? '';
    const allowed = models.some((m) => (m.endsWith('*') ? model.startsWith(m.slice(0, -1)) : m === model));
    return allowed ? { passed: true } : { passed: false, message: `model "${model}" is not allowed` };
  },
};
