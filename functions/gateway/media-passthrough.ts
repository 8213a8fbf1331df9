import { badRequest } from '../core/errors';
import type { OperationNameOf } from '../core/operations';
import { OnceStore } from '../store/once-store';
import { translationFields, translationReply } from './audio-translation';
import {
  type Costing,
  imageCost,
  imageMaxCost,
  speechCost,
  speechMaxCost,
  transcriptionCost,
  transcriptionMaxCost,
  videoCost,
  videoMaxCost,
} from './media-pricing';
import { type CostInput, none, type PassthroughSpec, required, str } from './passthrough';

// The media function's forwarded operations (images, videos, audio): what each takes, how it is checked and
// how it is costed. The forwarding itself is functions/gateway/passthrough.ts.

// `<width>x<height>` as every image and video model writes it, or `auto` where the model chooses.
const SIZE = /^\d{2,5}x\d{2,5}$/;
function validSize(body: Record<string, unknown>): void {
  const size = body.size;
  if (size === undefined || size === null) return;
  if (typeof size !== 'string' || (size !== 'auto' && !SIZE.test(size))) {
    throw badRequest(
      'size must be "<width>x<height>" (such as 1024x1024) or "auto".',
      'size',
      'invalid_value',
    );
  }
}

const once = new OnceStore();

/**
 * A video's price, logged once per video: by its creation, whose reply already names the model, size and
 * seconds ordered, so a video nobody reads back through the gateway is still paid for; or, for a video whose
 * creation could not be priced or was not seen here, by the first read that shows it completed.
 */
async function videoPrice(
  { provider, reply, principal }: CostInput,
  when: (status: unknown) => boolean,
): Promise<Costing | null> {
  const video = reply as { id?: unknown; status?: unknown } | undefined;
  if (!video || !when(video.status) || !str(video.id)) return null;
  const cost = videoCost(provider, video);
  if (cost === null) return null;
  const first = await once.claim(principal.organisationId, `VIDEO#${provider}#${video.id}`);
  return first ? { usage: null, cost } : null;
}

const createdVideoCost = (input: CostInput) => videoPrice(input, (status) => status !== 'failed');
const completedVideoCost = (input: CostInput) => videoPrice(input, (status) => status === 'completed');

/** An audio file to text: priced by the audio's length, which the reply states. */
const transcription: PassthroughSpec = {
  request: 'body',
  multipartOnly: true,
  validate: (b) => required(b, 'model'),
  cost: ({ provider, model, reply }) => transcriptionCost(provider, model, reply),
  maxCost: ({ provider, model, request, files }) =>
    transcriptionMaxCost(provider, model, files.bytes, request),
};

export const MEDIA_PASSTHROUGH = {
  'images.generations': {
    request: 'body',
    validate: (b) => {
      required(b, 'prompt');
      validSize(b);
    },
    // DALL·E 2 is the model the API uses when the request names none.
    cost: ({ provider, model, request, reply }) => imageCost(provider, model ?? 'dall-e-2', request, reply),
    maxCost: ({ provider, model, request }) => imageMaxCost(provider, model ?? 'dall-e-2', request),
  },
  'images.edits': {
    request: 'body',
    multipartOnly: true,
    validate: (b) => {
      required(b, 'prompt');
      validSize(b);
    },
    cost: ({ provider, model, request, reply }) => imageCost(provider, model ?? 'dall-e-2', request, reply),
    maxCost: ({ provider, model, request, files }) =>
      imageMaxCost(provider, model ?? 'dall-e-2', request, files.count),
  },
  'images.variations': {
    request: 'body',
    multipartOnly: true,
    validate: validSize,
    cost: ({ provider, model, request, reply }) => imageCost(provider, model ?? 'dall-e-2', request, reply),
    maxCost: ({ provider, model, request, files }) =>
      imageMaxCost(provider, model ?? 'dall-e-2', request, files.count),
  },
  'videos.create': {
    request: 'body',
    validate: (b) => {
      required(b, 'prompt');
      validSize(b);
    },
    cost: createdVideoCost,
    // Sora 2 is the model the API uses when the request names none.
    maxCost: ({ provider, model, request }) => videoMaxCost(provider, model ?? 'sora-2', request),
  },
  'videos.list': none,
  'videos.get': { request: 'none', cost: completedVideoCost },
  'videos.delete': none,
  'videos.content': { request: 'none', reply: 'binary' },
  'audio.transcriptions': transcription,
  'audio.translations': {
    ...transcription,
    // Only verbose_json replies say how long the audio was, which is what a translation costs.
    reshape: {
      fields: translationFields,
      reply: (fields, reply) => translationReply(fields.response_format, reply),
    },
  },
  'audio.speech': {
    request: 'body',
    reply: 'binary',
    validate: (b) => required(b, 'model', 'input', 'voice'),
    cost: ({ provider, model, request }) => speechCost(provider, model, request),
    maxCost: ({ provider, model, request }) => speechMaxCost(provider, model, request),
  },
} satisfies Partial<Record<OperationNameOf<'media'>, PassthroughSpec>>;
