import { type HttpEvent, jsonResult, listResult, type RequestState } from '../core/http';
import type { Principal } from '../core/principal';
import { bodyText, jsonBody } from '../core/request-body';
import type { OperationTable } from '../gateway/dispatch';
import { openApiDocument } from '../openapi/document';
import { ApiKeyService, presentKeyDetail } from './api-keys';
import { AuditLog, presentAuditEntry } from './audit-log';
import { ConfigService, presentConfig } from './configs';
import { egressSettings } from './egress-settings';
import { GuardrailService, presentGuardrail } from './guardrails';
import { JwtSettingsService, presentJwtSettings } from './jwt-settings';
import { OrganisationService, presentWorkspace, presentWorkspaceDetail } from './organisation';
import { presentSsoSettings, SsoSettingsService } from './sso';
import { presentVirtualKey, VirtualKeyService } from './virtual-keys';

const apiKeys = new ApiKeyService();
const organisations = new OrganisationService();
const virtualKeys = new VirtualKeyService();
const configs = new ConfigService();
const guardrails = new GuardrailService();

// An organisation admin may name another workspace with `?workspace=`; others act in their own.
const workspaceParam = (event: HttpEvent) => event.queryStringParameters?.workspace || undefined;
const jwtSettings = new JwtSettingsService();
const ssoSettings = new SsoSettingsService();
const auditLog = new AuditLog();

const caller = (state: RequestState) => state.principal as Principal;

/** Control-plane operations of the `control` function group, by operation name. */
export const controlOperations = {
  health: async () => jsonResult(200, { status: 'ok' }),

  openapi: async () => jsonResult(200, openApiDocument()),

  'organisation.get': async (_event, state) => jsonResult(200, await organisations.describe(caller(state))),

  'workspaces.list': async (_event, state) =>
    listResult((await organisations.listWorkspaces(caller(state))).map(presentWorkspace), null),

  'workspaces.create': async (event, state) =>
    jsonResult(
      201,
      presentWorkspace(await organisations.createWorkspace(caller(state), jsonBody(bodyText(event)))),
    ),

  'workspaces.get': async (_event, state) =>
    jsonResult(
      200,
      await presentWorkspaceDetail(await organisations.getWorkspace(caller(state), state.params.slug ?? '')),
    ),

  'workspaces.update': async (event, state) =>
    jsonResult(
      200,
      await presentWorkspaceDetail(
        await organisations.updateWorkspace(
          caller(state),
          state.params.slug ?? '',
          jsonBody(bodyText(event)),
        ),
      ),
    ),

  'api_keys.create': async (event, state) => {
    const { record, key } = await apiKeys.create(caller(state), jsonBody(bodyText(event)));
    return jsonResult(201, { ...(await presentKeyDetail(record)), key });
  },

  'api_keys.update': async (event, state) =>
    jsonResult(
      200,
      await presentKeyDetail(
        await apiKeys.update(caller(state), state.params.id ?? '', jsonBody(bodyText(event))),
      ),
    ),

  'api_keys.list': async (_event, state) =>
    listResult(await Promise.all((await apiKeys.list(caller(state))).map(presentKeyDetail)), null),

  'api_keys.delete': async (_event, state) => {
    const id = state.params.id ?? '';
    await apiKeys.delete(caller(state), id);
    return jsonResult(200, { id, object: 'api_key', deleted: true });
  },

  'virtual_keys.create': async (event, state) =>
    jsonResult(201, presentVirtualKey(await virtualKeys.create(caller(state), jsonBody(bodyText(event))))),

  'virtual_keys.list': async (event, state) =>
    listResult((await virtualKeys.list(caller(state), workspaceParam(event))).map(presentVirtualKey), null),

  'virtual_keys.get': async (event, state) =>
    jsonResult(
      200,
      presentVirtualKey(await virtualKeys.get(caller(state), state.params.slug ?? '', workspaceParam(event))),
    ),

  'virtual_keys.update': async (event, state) =>
    jsonResult(
      200,
      presentVirtualKey(
        await virtualKeys.update(
          caller(state),
          state.params.slug ?? '',
          jsonBody(bodyText(event)),
          workspaceParam(event),
        ),
      ),
    ),

  'virtual_keys.delete': async (event, state) => {
    const slug = state.params.slug ?? '';
    await virtualKeys.delete(caller(state), slug, workspaceParam(event));
    return jsonResult(200, { slug, object: 'virtual_key', deleted: true });
  },

  'configs.create': async (event, state) =>
    jsonResult(201, presentConfig(await configs.create(caller(state), jsonBody(bodyText(event))))),

  'configs.list': async (event, state) =>
    listResult((await configs.list(caller(state), workspaceParam(event))).map(presentConfig), null),

  'configs.get': async (event, state) =>
    jsonResult(
      200,
      presentConfig(await configs.get(caller(state), state.params.id ?? '', workspaceParam(event))),
    ),

  'configs.replace': async (event, state) =>
    jsonResult(
      200,
      presentConfig(
        await configs.replace(
          caller(state),
          state.params.id ?? '',
          jsonBody(bodyText(event)),
          workspaceParam(event),
        ),
      ),
    ),

  'configs.delete': async (event, state) => {
    const id = state.params.id ?? '';
    await configs.delete(caller(state), id, workspaceParam(event));
    return jsonResult(200, { id, object: 'config', deleted: true });
  },

  'guardrails.create': async (event, state) =>
    jsonResult(201, presentGuardrail(await guardrails.create(caller(state), jsonBody(bodyText(event))))),

  'guardrails.list': async (_event, state) =>
    listResult((await guardrails.list(caller(state))).map(presentGuardrail), null),

  'guardrails.get': async (_event, state) =>
    jsonResult(200, presentGuardrail(await guardrails.get(caller(state), state.params.id ?? ''))),

  'guardrails.replace': async (event, state) =>
    jsonResult(
      200,
      presentGuardrail(
        await guardrails.replace(caller(state), state.params.id ?? '', jsonBody(bodyText(event))),
      ),
    ),

  'guardrails.delete': async (_event, state) => {
    const id = state.params.id ?? '';
    await guardrails.delete(caller(state), id);
    return jsonResult(200, { id, object: 'guardrail', deleted: true });
  },

  'organisation.jwt.put': async (event, state) =>
    jsonResult(200, presentJwtSettings(await jwtSettings.put(caller(state), jsonBody(bodyText(event))))),

  'organisation.jwt.get': async (_event, state) =>
    jsonResult(200, presentJwtSettings(await jwtSettings.get(caller(state)))),

  'organisation.jwt.delete': async (_event, state) => {
    await jwtSettings.delete(caller(state));
    return jsonResult(200, { object: 'organisation.jwt', deleted: true });
  },

  'organisation.egress.put': async (event, state) =>
    jsonResult(200, await egressSettings.put(caller(state), jsonBody(bodyText(event)))),

  'organisation.egress.get': async (_event, state) =>
    jsonResult(200, await egressSettings.get(caller(state))),

  'organisation.sso.put': async (event, state) =>
    jsonResult(200, presentSsoSettings(await ssoSettings.put(caller(state), jsonBody(bodyText(event))))),

  'organisation.sso.get': async (_event, state) =>
    jsonResult(200, presentSsoSettings(await ssoSettings.get(caller(state)))),

  'organisation.sso.delete': async (_event, state) => {
    await ssoSettings.delete(caller(state));
    return jsonResult(200, { object: 'organisation.sso', deleted: true });
  },

  'organisation.sso.config': async (event) =>
    jsonResult(200, await ssoSettings.publicConfig(event.queryStringParameters?.organisation || undefined)),

  'audit_logs.list': async (event, state) => {
    const page = await auditLog.list(caller(state), event.queryStringParameters ?? {});
    return listResult(page.data.map(presentAuditEntry), page.nextCursor);
  },
} satisfies OperationTable<'control'>;
