import { text, workspaceField } from './body-parts';
import type { BodySpec } from './fields';

// The prompt bodies, apart from the other control-plane bodies (functions/control/bodies.ts re-exports
// them for the OpenAPI document): a prompt run checks its body with them on the prompts function's request
// path, which then loads these and not every other body description.

/** Hyperparameters a prompt may fix, as the chat completions API names them. */
export const HYPERPARAMETERS: BodySpec = {
  title: 'hyperparameters',
  description: 'Chat completions parameters the prompt sends with its messages.',
  fields: {
    max_tokens: { schema: { type: 'integer', minimum: 1 }, description: 'As in chat completions.' },
    max_completion_tokens: {
      schema: { type: 'integer', minimum: 1 },
      description: 'As in chat completions.',
    },
    temperature: {
      schema: { type: 'number', minimum: 0, maximum: 2 },
      description: 'As in chat completions.',
    },
    top_p: { schema: { type: 'number', minimum: 0, maximum: 1 }, description: 'As in chat completions.' },
    presence_penalty: {
      schema: { type: 'number', minimum: -2, maximum: 2 },
      description: 'As in chat completions.',
    },
    frequency_penalty: {
      schema: { type: 'number', minimum: -2, maximum: 2 },
      description: 'As in chat completions.',
    },
    stop: { schema: { type: ['string', 'array'] }, description: 'As in chat completions.' },
    n: { schema: { type: 'integer', minimum: 1, maximum: 128 }, description: 'As in chat completions.' },
    seed: { schema: { type: 'integer' }, description: 'As in chat completions.' },
    response_format: { schema: { type: 'object' }, description: 'As in chat completions.' },
    tools: { schema: { type: 'array' }, description: 'As in chat completions.' },
    tool_choice: { schema: { type: ['string', 'object'] }, description: 'As in chat completions.' },
    parallel_tool_calls: { schema: { type: 'boolean' }, description: 'As in chat completions.' },
    logit_bias: { schema: { type: 'object' }, description: 'As in chat completions.' },
    logprobs: { schema: { type: 'boolean' }, description: 'As in chat completions.' },
    top_logprobs: { schema: { type: 'integer' }, description: 'As in chat completions.' },
    reasoning_effort: { schema: { type: 'string' }, description: 'As in chat completions.' },
  },
};

export const PROMPT: BodySpec = {
  title: 'a prompt',
  description: 'A versioned chat template: every update adds a version.',
  fields: {
    name: { schema: text(), description: 'Display name; the id when absent.' },
    model: { schema: text(), description: 'Model the prompt runs on.', required: true },
    messages: {
      schema: { type: 'array', minItems: 1, items: { type: 'object' } },
      description: 'Chat messages; `{{variable}}` in their text is filled when the prompt is rendered.',
      required: true,
    },
    provider: {
      schema: { type: ['string', 'null'] },
      description: 'Provider to call (or give virtual_key).',
    },
    virtual_key: { schema: { type: ['string', 'null'] }, description: 'Slug of the virtual key to call.' },
    hyperparameters: {
      schema: { type: 'object', propertyNames: { enum: Object.keys(HYPERPARAMETERS.fields) } },
      description: HYPERPARAMETERS.description,
    },
    workspace: workspaceField,
  },
};

export const PROMPT_RUN: BodySpec = {
  title: 'a prompt run',
  description: 'Values for the template’s variables, and hyperparameters that override the prompt’s.',
  fields: {
    variables: {
      schema: { type: 'object', additionalProperties: true },
      description: 'Values of the template variables (required, even when empty).',
      required: true,
    },
    version: {
      schema: { type: 'integer', minimum: 1 },
      description: 'Version to run; the latest when absent.',
    },
    stream: { schema: { type: 'boolean' }, description: 'Stream the reply as chat completion chunks.' },
    stream_options: { schema: { type: 'object' }, description: 'As in chat completions.' },
    user: { schema: { type: 'string' }, description: 'End user id, logged and budgeted.' },
    metadata: { schema: { type: 'object' }, description: 'As in chat completions.' },
    ...HYPERPARAMETERS.fields,
  },
};
