import type { HttpEvent, ModelCallState } from '../core/http';
import { type CallSuccess, exchange } from './call-upstream';
import type { OperationHandler } from './dispatch';
import { routeModelCall } from './model-call';
import type { ResolvedTarget } from './target';

// `GET /v1/models` and `GET /v1/models/{model}` on every provider, in OpenAI's `ListModelsResponse` and
// `Model` shapes: relayed from providers that list in that shape, translated from those that do not
// (Anthropic, Gemini, Bedrock). A translated listing is the provider's first page (up to 1,000 models).

interface Listed extends CallSuccess {
  target: ResolvedTarget;
}

function listing(id: string | undefined): OperationHandler<ModelCallState> {
  return async (event: HttpEvent, state: ModelCallState) => {
    const log = state.log;
    const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
    log.request = query ? { query: event.queryStringParameters ?? {} } : null;
    const attempt = async (target: ResolvedTarget): Promise<Listed> => {
      const models = target.provider.models;
      if (!models) {
        const path = `/models${id === undefined ? '' : `/${encodeURIComponent(id)}`}${query}`;
        return { ...(await exchange(state, target, { method: 'GET', path, keepOpen: () => false })), target };
      }
      const call = await models.call(target.baseUrl, target, id);
      const success = await exchange(state, target, {
        method: 'GET',
        url: call.url,
        providerHeaders: { ...target.provider.headers(target), ...call.headers },
        translateError: target.provider.chat?.error,
        keepOpen: () => false,
      });
      return { ...success, target };
    };
    const { target, success } = await routeModelCall(state, undefined, attempt);
    const models = target.provider.models;
    const reply = models
      ? id === undefined
        ? { object: 'list', data: models.list(success.reply) }
        : models.one(success.reply)
      : success.reply;
    log.response = reply;
    return {
      statusCode: success.status,
      headers: { 'content-type': 'application/json', ...success.headers },
      body: models ? JSON.stringify(reply) : (success.replyText as string),
    };
  };
}

/** GET /v1/models */
export const modelsList: OperationHandler<ModelCallState> = (event, state) =>
  listing(undefined)(event, state);

/** GET /v1/models/{model} */
export const modelsGet: OperationHandler<ModelCallState> = (event, state) =>
  listing(state.params.model ?? '')(event, state);
