import type { OperationHandler } from '../gateway/dispatch';
import { jsonResult, listResult, type RequestState } from '../gateway/http';
import { bodyText, jsonBody } from '../gateway/request-body';
import { ApiKeyService, presentKey } from './api-keys';
import { OrganisationService, presentWorkspace } from './organisation';
import type { Principal } from './principal';

const apiKeys = new ApiKeyService();
const organisations = new OrganisationService();

const caller = (state: RequestState) => state.principal as Principal;

/** Control-plane operations of the `control` function group, by operation name. */
export const controlOperations: Record<string, OperationHandler> = {
  health: async () => jsonResult(200, { status: 'ok' }),

  'organisation.get': async (_event, state) => jsonResult(200, await organisations.describe(caller(state))),

  'workspaces.list': async (_event, state) =>
    listResult((await organisations.listWorkspaces(caller(state))).map(presentWorkspace), null),

  'workspaces.create': async (event, state) =>
    jsonResult(
      201,
      presentWorkspace(await organisations.createWorkspace(caller(state), jsonBody(bodyText(event)))),
    ),

  'api_keys.create': async (event, state) => {
    const { record, key } = await apiKeys.create(caller(state), jsonBody(bodyText(event)));
    return jsonResult(201, { ...presentKey(record), key });
  },

  'api_keys.list': async (_event, state) =>
    listResult((await apiKeys.list(caller(state))).map(presentKey), null),

  'api_keys.delete': async (_event, state) => {
    const id = state.params.id ?? '';
    await apiKeys.delete(caller(state), id);
    return jsonResult(200, { id, object: 'api_key', deleted: true });
  },
};
