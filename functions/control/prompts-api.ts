import { type HttpEvent, jsonResult, listResult, type RequestState } from '../core/http';
import type { UsageLogDraft } from '../core/log-entry';
import type { Principal } from '../core/principal';
import { bodyText, jsonBody } from '../core/request-body';
import { runChatCompletion } from '../gateway/chat-completions';
import type { OperationTable } from '../gateway/dispatch';
import { PromptService, parseVersion, presentPrompt } from './prompts';

const prompts = new PromptService();
const caller = (state: RequestState) => state.principal as Principal;
const query = (event: HttpEvent, name: string) => event.queryStringParameters?.[name] || undefined;

/** The operations of the `prompts` function group: the library, rendering, and prompt completions. */
export const promptOperations = {
  'prompts.create': async (event, state) =>
    jsonResult(201, presentPrompt(await prompts.create(caller(state), jsonBody(bodyText(event))))),

  'prompts.list': async (event, state) =>
    listResult((await prompts.list(caller(state), query(event, 'workspace'))).map(presentPrompt), null),

  'prompts.get': async (event, state) =>
    jsonResult(
      200,
      presentPrompt(
        await prompts.get(
          caller(state),
          state.params.id ?? '',
          parseVersion(query(event, 'version')),
          query(event, 'workspace'),
        ),
      ),
    ),

  'prompts.update': async (event, state) =>
    jsonResult(
      200,
      presentPrompt(
        await prompts.update(
          caller(state),
          state.params.id ?? '',
          jsonBody(bodyText(event)),
          query(event, 'workspace'),
        ),
      ),
    ),

  'prompts.delete': async (_event, state) => {
    const id = state.params.id ?? '';
    await prompts.delete(caller(state), id);
    return jsonResult(200, { id, object: 'prompt', deleted: true });
  },

  'prompts.render': async (event, state) => {
    const { prompt, request } = await prompts.render(
      caller(state),
      state.params.id ?? '',
      jsonBody(bodyText(event)),
      query(event, 'version'),
    );
    return jsonResult(200, {
      object: 'prompt.render',
      id: prompt.id,
      version: prompt.version,
      data: request,
    });
  },

  /** Renders the prompt and runs it through the chat completions pipeline, streamed or not. */
  'prompts.completions': async (event, state) => {
    const log = state.log as UsageLogDraft;
    const text = bodyText(event);
    log.request = text;
    const input = jsonBody(text);
    log.request = input;
    const { prompt, request } = await prompts.render(
      caller(state),
      state.params.id ?? '',
      input,
      query(event, 'version'),
    );
    log.prompt = { id: prompt.id, version: prompt.version };
    // The prompt's target applies unless the request names its own route (headers, config, `@slug/`).
    const defaults = prompt.virtual_key
      ? { virtualKey: { value: prompt.virtual_key, param: 'prompt.virtual_key' } }
      : prompt.provider
        ? { provider: { value: prompt.provider, param: 'prompt.provider' } }
        : undefined;
    return runChatCompletion(request, state, { defaults });
  },
} satisfies OperationTable<'prompts'>;
