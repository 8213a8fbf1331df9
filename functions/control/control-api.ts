import type { OperationHandler } from '../gateway/dispatch';
import { jsonResult, listResult, type RequestState } from '../gateway/http';
import { bodyText, jsonBody } from '../gateway/request-body';
import { ApiKeyService, presentKey } from './api-keys';
import { AuditLog, presentAuditEntry } from './audit-log';
import { JwtSettingsService, presentJwtSettings } from './jwt-settings';
import { OrganisationService, presentWorkspace } from './organisation';
import type { Principal } from './principal';

const apiKeys = new ApiKeyService();
const organisations = new OrganisationService();
const jwtSettings = new JwtSettingsService();
const auditLog = new AuditLog();

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

  'organisation.jwt.put': async (event, state) =>
    jsonResult(200, presentJwtSettings(await jwtSettings.put(caller(state), jsonBody(bodyText(event))))),

  'organisation.jwt.get': async (_event, state) =>
    jsonResult(200, presentJwtSettings(await jwtSettings.get(caller(state)))),

  'organisation.jwt.delete': async (_event, state) => {
    await jwtSettings.delete(caller(state));
    return jsonResult(200, { object: 'organisation.jwt', deleted: true });
  },

  'audit_logs.list': async (event, state) => {
    const page = await auditLog.list(caller(state), event.queryStringParameters ?? {});
    return listResult(page.data.map(presentAuditEntry), page.nextCursor);
  },
};
