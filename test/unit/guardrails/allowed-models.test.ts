import { describe, expect, it } from 'vitest';
import { problemsOf, verdict } from './helpers';

describe('allowed_models check', () => {
  it('allows listed models and prefixes ending in *', async () => {
    const config = { type: 'allowed_models', models: ['gpt-5.4-mini', 'claude-*'] };
    expect((await verdict(config, '', { model: 'gpt-5.4-mini' })).passed).toBe(true);
    expect((await verdict(config, '', { model: 'claude-sonnet-4-5' })).passed).toBe(true);
    const refused = await verdict(config, '', { model: 'gpt-5.5-pro' });
    expect(refused.passed).toBe(false);
    expect(refused.message).toContain('gpt-5.5-pro');
  });

  it('needs a model list', () => {
    expect(problemsOf({ type: 'allowed_models' }).join()).toContain('models');
  });
});
