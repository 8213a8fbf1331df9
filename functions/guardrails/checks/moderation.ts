import type { GuardrailCheck } from '../types';
import { noOtherFields, stringList } from './param';

/** Asks the provider's moderation endpoint; fails when it flags the text (in `categories`, if given). */
export const moderationCheck: GuardrailCheck<{ categories: string[] }> = {
  type: 'moderation',
  redacts: false,
  parse(params, problems, at) {
    noOtherFields(params, ['categories'], problems, at);
    return { categories: stringList(params.categories, problems, `${at}.categories`, false) };
  },
  async run(text, { categories }, context) {
    if (!context.moderate) return { passed: false, message: 'no moderation endpoint for this provider' };
    const result = await context.moderate(text);
    const hits =
      categories.length > 0 ? result.categories.filter((c) => categories.includes(c)) : result.categories;
    if (!result.flagged || hits.length === 0) return { passed: true };
    return { passed: false, message: `flagged: ${hits.join(', ')}` };
  },
};
