import type { GuardrailCheck } from '../types';
import { noOtherFields, optionalCount } from './param';

interface Bounds {
  min?: number;
  max?: number;
}

function bounded(type: string, unit: string, count: (text: string) => number): GuardrailCheck<Bounds> {
  return {
    type,
    redacts: false,
    parse(params, problems, at) {
      noOtherFields(params, ['min', 'max'], problems, at);
      const min = optionalCount(params.min, problems, `${at}.min`);
      const max = optionalCount(params.max, problems, `${at}.max`);
      if (min === undefined && max === undefined) problems.push(`${at} needs min, max or both`);
      if (min !== undefined && max !== undefined && min > max) problems.push(`${at}.min is above max`);
      return { min, max };
    },
    run(text, { min, max }) {
      const n = count(text);
      if (min !== undefined && n < min) return { passed: false, message: `${n} ${unit}, fewer than ${min}` };
      if (max !== undefined && n > max) return { passed: false, message: `${n} ${unit}, more than ${max}` };
      return { passed: true };
    },
  };
}

const words = (text: string) => text.match(/[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu)?.length ?? 0;
const sentences = (text: string) =>
  text.split(/[.!?。！？]+(?:\s+|$)/u).filter((s) => s.trim() !== '').length;

export const charCountCheck = bounded('character_count', 'characters', (text) => [...text].length);
export const wordCountCheck = bounded('word_count', 'words', words);
export const sentenceCountCheck = bounded('sentence_count', 'sentences', sentences);
