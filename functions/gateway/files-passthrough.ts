import { badRequest } from '../core/errors';
import type { OperationNameOf } from '../core/operations';
import { embeddingCost, embeddingMaxCost } from './media-pricing';
import { body, none, type PassthroughSpec, required, str } from './passthrough';

// The files function's forwarded operations (files, vector stores, fine-tuning, embeddings): what each
// takes, how it is checked and how it is costed. The forwarding itself is functions/gateway/passthrough.ts;
// the models listing is functions/gateway/models.ts.

export const FILES_PASSTHROUGH = {
  'files.create': { request: 'body', multipartOnly: true, validate: (b) => required(b, 'purpose') },
  'files.list': none,
  'files.get': none,
  'files.delete': none,
  'files.content': { request: 'none', reply: 'binary' },
  'vector_stores.create': body,
  'vector_stores.list': none,
  'vector_stores.get': none,
  'vector_stores.update': body,
  'vector_stores.delete': none,
  'vector_stores.search': {
    request: 'body',
    validate: (b) => {
      if (!str(b.query) && !Array.isArray(b.query)) {
        throw badRequest('query is required: a string or an array of strings.', 'query');
      }
    },
  },
  'vector_stores.files.create': { request: 'body', validate: (b) => required(b, 'file_id') },
  'vector_stores.files.list': none,
  'vector_stores.files.get': none,
  'vector_stores.files.delete': none,
  'fine_tuning.jobs.create': { request: 'body', validate: (b) => required(b, 'model', 'training_file') },
  'fine_tuning.jobs.list': none,
  'fine_tuning.jobs.get': none,
  'fine_tuning.jobs.cancel': none,
  'fine_tuning.jobs.events': none,
  'fine_tuning.jobs.checkpoints': none,
  'embeddings.create': {
    request: 'body',
    validate: (b) => {
      required(b, 'model');
      if (b.input === undefined || b.input === null || b.input === '') {
        throw badRequest('input is required.', 'input', 'missing_required_parameter');
      }
    },
    cost: ({ provider, model, reply, operator }) => embeddingCost(provider, model, reply, operator),
    maxCost: ({ provider, model, request, operator }) => embeddingMaxCost(provider, model, request, operator),
  },
} satisfies Partial<Record<OperationNameOf<'files'>, PassthroughSpec>>;
