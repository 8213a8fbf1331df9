import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Scope } from '../core/operations';
import { documentClient, queryByPrefix, tableName } from './dynamo';

// Control entities in one table. Keys:
//   BOOTSTRAP / BOOTSTRAP        -> which organisation the deployment bootstrapped
//   ORG#<org> / ORG              -> organisation
//   ORG#<org> / WS#<slug>        -> workspace
//   ORG#<org> / KEY#<id>         -> API key record (listing, deletion)
//   KEYHASH#<sha256> / KEY       -> API key record by hash (authentication, one GetItem)
//   ORG#<org> / VK#<ws>#<slug>   -> virtual key (its budget state and spend live in the counters table)
//   ORG#<org> / CFG#<ws>#<id>    -> saved gateway config
//   ORG#<org> / JWT              -> the organisation's JWT key set configuration
//   ORG#<org> / EGRESS           -> which custom hosts requests may name

export interface OrganisationRecord {
  id: string;
  name: string;
  created_at: string;
}

export interface WorkspaceRecord {
  id: string;
  slug: string;
  name: string;
  organisation_id: string;
  created_at: string;
  /** The workspace policy as JSON text (see gateway/policy.ts); absent when none is set. */
  policy_json?: string;
  /** Operator prices by model as JSON text, USD per million tokens; they win over the price table. */
  prices_json?: string;
  /** Metadata keys whose values `GET /v1/logs` can filter on alone: each has an index (log-store.ts). */
  indexed_metadata?: string[];
  updated_at?: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  type: 'workspace' | 'organisation';
  organisation_id: string;
  /** Workspace slug; null for organisation keys. */
  workspace: string | null;
  scopes: Scope[];
  key_hash: string;
  /** The key's last four characters, for recognising it in a list. */
  last_four: string;
  created_at: string;
  /** The key's policy as JSON text (see gateway/policy.ts); absent when none is set. */
  policy_json?: string;
}

/** A virtual key's description. The credential is in the secret store under `secret_name`. */
export interface VirtualKeyRecord {
  /** Unique per creation: counters are keyed by it, so a re-created slug starts with no spend. */
  id: string;
  slug: string;
  name: string;
  organisation_id: string;
  workspace: string;
  provider: string;
  custom_host: string | null;
  vendor_organization: string | null;
  vendor_project: string | null;
  /** Provider account fields (Bedrock region; Azure resource, deployment, API version). Absent on keys made before them. */
  region?: string | null;
  resource_name?: string | null;
  deployment_id?: string | null;
  api_version?: string | null;
  secret_name: string;
  /** Operator prices by model as JSON text, USD per million tokens; they win over every other price. */
  prices_json?: string;
  created_at: string;
  updated_at: string;
}

export interface SavedConfigRecord {
  id: string;
  name: string | null;
  organisation_id: string;
  workspace: string;
  /** The config as JSON text: any JSON a client sends (override_params) must be storable. */
  config_json: string;
  /** Saved by an organisation admin: its custom hosts need not be in the organisation's egress list. */
  created_by_admin?: boolean;
  created_at: string;
  updated_at: string;
}

/** Exactly one of `jwks_url` and `jwks_json` is set. */
export interface JwtSettingsRecord {
  organisation_id: string;
  jwks_url?: string;
  /** The static key set as JSON text: public parameters only, validated before it is stored. */
  jwks_json?: string;
  /** Checked against `iss` when set. */
  issuer?: string;
  /** `aud` must hold one of these when set. */
  audience?: string[];
  /** Longest token lifetime accepted; 86400 when absent. */
  max_token_lifetime_seconds?: number;
  created_at: string;
  updated_at: string;
}

/** An organisation's OpenID Connect sign-in; its issuer is claimed by this organisation alone. */
export interface SsoSettingsRecord {
  organisation_id: string;
  issuer: string;
  client_id: string;
  scopes: string;
  /** `aud` must be this; the client id unless set. */
  audience?: string;
  /** Exactly one of `workspace_claim` (a claim naming the slug) and `workspace` (a fixed slug). */
  workspace_claim?: string;
  workspace?: string;
  /** Exactly one of `scopes_claim` (a claim holding gateway scopes) and `gateway_scopes`. */
  scopes_claim?: string;
  gateway_scopes?: string[];
  created_at: string;
  updated_at: string;
}

/** Which custom hosts callers may name; absent means the runtime's default. */
export interface EgressSettingsRecord {
  organisation_id: string;
  allow_custom_hosts: boolean;
  /** `host`, `host:port` or `*.domain`; empty means any host the address guard accepts. */
  allowed_hosts: string[];
  updated_at: string;
}

const TABLE = () => tableName('control');

export class ControlStore {
  // Read on use: a store may be made at import, before the local runtime sets the DynamoDB endpoint.
  private get db() {
    return documentClient();
  }

  async getBootstrapOrganisationId(): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: 'BOOTSTRAP', sk: 'BOOTSTRAP' }, ConsistentRead: true }),
    );
    return out.Item?.organisation_id as string | undefined;
  }

  /** Hashes of every admin key bootstrap created: a deleted one is never created again from its value. */
  async bootstrapAdminKeyHashes(): Promise<Set<string>> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: 'BOOTSTRAP', sk: 'BOOTSTRAP' }, ConsistentRead: true }),
    );
    return new Set((out.Item?.admin_key_hashes as Set<string> | undefined) ?? []);
  }

  async rememberBootstrapAdminKey(hash: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: 'BOOTSTRAP', sk: 'BOOTSTRAP' },
        UpdateExpression: 'ADD admin_key_hashes :hash',
        ExpressionAttributeValues: { ':hash': new Set([hash]) },
      }),
    );
  }

  /** Records the bootstrap organisation once; returns the one that won if another start raced us. */
  async claimBootstrap(organisationId: string): Promise<string> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: TABLE(),
          Item: { pk: 'BOOTSTRAP', sk: 'BOOTSTRAP', organisation_id: organisationId },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return organisationId;
    } catch (error) {
      if (isConditionFailure(error)) {
        const existing = await this.getBootstrapOrganisationId();
        if (existing) return existing;
      }
      throw error;
    }
  }

  async putOrganisation(org: OrganisationRecord): Promise<void> {
    await this.putIfAbsent({ pk: `ORG#${org.id}`, sk: 'ORG', ...org });
  }

  async getOrganisation(id: string): Promise<OrganisationRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `ORG#${id}`, sk: 'ORG' } }),
    );
    return out.Item ? strip<OrganisationRecord>(out.Item) : undefined;
  }

  /** Creates the workspace; false when the slug is taken. */
  async createWorkspace(ws: WorkspaceRecord): Promise<boolean> {
    return this.putIfAbsent({ pk: `ORG#${ws.organisation_id}`, sk: `WS#${ws.slug}`, ...ws });
  }

  async getWorkspace(organisationId: string, slug: string): Promise<WorkspaceRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `ORG#${organisationId}`, sk: `WS#${slug}` } }),
    );
    return out.Item ? strip<WorkspaceRecord>(out.Item) : undefined;
  }

  /** Replaces an existing workspace's record (its policy and prices). */
  async putWorkspace(ws: WorkspaceRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${ws.organisation_id}`, sk: `WS#${ws.slug}`, ...ws },
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  }

  async listWorkspaces(organisationId: string): Promise<WorkspaceRecord[]> {
    return this.queryPrefix<WorkspaceRecord>(`ORG#${organisationId}`, 'WS#');
  }

  /** Writes the hash record first: a key that cannot be listed is better than one that cannot be used. */
  async putApiKey(key: ApiKeyRecord): Promise<void> {
    await this.db.send(
      new PutCommand({ TableName: TABLE(), Item: { pk: `KEYHASH#${key.key_hash}`, sk: 'KEY', ...key } }),
    );
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${key.organisation_id}`, sk: `KEY#${key.id}`, ...key },
      }),
    );
  }

  async getApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `KEYHASH#${hash}`, sk: 'KEY' } }),
    );
    return out.Item ? strip<ApiKeyRecord>(out.Item) : undefined;
  }

  async getApiKey(organisationId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `ORG#${organisationId}`, sk: `KEY#${id}` } }),
    );
    return out.Item ? strip<ApiKeyRecord>(out.Item) : undefined;
  }

  async listApiKeys(organisationId: string): Promise<ApiKeyRecord[]> {
    return this.queryPrefix<ApiKeyRecord>(`ORG#${organisationId}`, 'KEY#');
  }

  /** Removes the hash record first, so the key stops authenticating even if the second delete fails. */
  async deleteApiKey(key: ApiKeyRecord): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: TABLE(), Key: { pk: `KEYHASH#${key.key_hash}`, sk: 'KEY' } }),
    );
    await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${key.organisation_id}`, sk: `KEY#${key.id}` },
      }),
    );
  }

  /** Creates the virtual key; false when its slug is taken in the workspace. */
  async createVirtualKey(vk: VirtualKeyRecord): Promise<boolean> {
    return this.putIfAbsent({ pk: `ORG#${vk.organisation_id}`, sk: `VK#${vk.workspace}#${vk.slug}`, ...vk });
  }

  async putVirtualKey(vk: VirtualKeyRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${vk.organisation_id}`, sk: `VK#${vk.workspace}#${vk.slug}`, ...vk },
      }),
    );
  }

  async getJwtSettings(organisationId: string): Promise<JwtSettingsRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `ORG#${organisationId}`, sk: 'JWT' } }),
    );
    return out.Item ? strip<JwtSettingsRecord>(out.Item) : undefined;
  }

  async putJwtSettings(settings: JwtSettingsRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${settings.organisation_id}`, sk: 'JWT', ...settings },
      }),
    );
  }

  async getSsoSettings(organisationId: string): Promise<SsoSettingsRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `ORG#${organisationId}`, sk: 'SSO' } }),
    );
    return out.Item ? strip<SsoSettingsRecord>(out.Item) : undefined;
  }

  /** The organisation whose SSO settings name this issuer. */
  async getSsoIssuerOrganisation(issuer: string): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `SSOISSUER#${issuer}`, sk: 'SSO' } }),
    );
    return out.Item?.organisation_id as string | undefined;
  }

  /** Saves the settings and claims their issuer; false when another organisation holds the issuer. */
  async putSsoSettings(settings: SsoSettingsRecord, previousIssuer?: string): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: TABLE(),
          Item: { pk: `SSOISSUER#${settings.issuer}`, sk: 'SSO', organisation_id: settings.organisation_id },
          ConditionExpression: 'attribute_not_exists(pk) OR organisation_id = :org',
          ExpressionAttributeValues: { ':org': settings.organisation_id },
        }),
      );
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${settings.organisation_id}`, sk: 'SSO', ...settings },
      }),
    );
    if (previousIssuer !== undefined && previousIssuer !== settings.issuer) {
      await this.deleteSsoIssuer(previousIssuer);
    }
    return true;
  }

  /** False when there was nothing to delete. */
  async deleteSsoSettings(organisationId: string): Promise<boolean> {
    const out = await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${organisationId}`, sk: 'SSO' },
        ReturnValues: 'ALL_OLD',
      }),
    );
    if (!out.Attributes) return false;
    await this.deleteSsoIssuer(out.Attributes.issuer as string);
    return true;
  }

  private async deleteSsoIssuer(issuer: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: TABLE(), Key: { pk: `SSOISSUER#${issuer}`, sk: 'SSO' } }),
    );
  }

  async getEgressSettings(organisationId: string): Promise<EgressSettingsRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk: `ORG#${organisationId}`, sk: 'EGRESS' } }),
    );
    return out.Item ? strip<EgressSettingsRecord>(out.Item) : undefined;
  }

  async putEgressSettings(settings: EgressSettingsRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${settings.organisation_id}`, sk: 'EGRESS', ...settings },
      }),
    );
  }

  async getVirtualKey(
    organisationId: string,
    workspace: string,
    slug: string,
  ): Promise<VirtualKeyRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${organisationId}`, sk: `VK#${workspace}#${slug}` },
      }),
    );
    return out.Item ? strip<VirtualKeyRecord>(out.Item) : undefined;
  }

  async listVirtualKeys(organisationId: string, workspace: string): Promise<VirtualKeyRecord[]> {
    return this.queryPrefix<VirtualKeyRecord>(`ORG#${organisationId}`, `VK#${workspace}#`);
  }

  async deleteVirtualKey(vk: VirtualKeyRecord): Promise<void> {
    await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${vk.organisation_id}`, sk: `VK#${vk.workspace}#${vk.slug}` },
      }),
    );
  }

  async putConfig(config: SavedConfigRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: `ORG#${config.organisation_id}`, sk: `CFG#${config.workspace}#${config.id}`, ...config },
      }),
    );
  }

  async getConfig(
    organisationId: string,
    workspace: string,
    id: string,
  ): Promise<SavedConfigRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${organisationId}`, sk: `CFG#${workspace}#${id}` },
      }),
    );
    return out.Item ? strip<SavedConfigRecord>(out.Item) : undefined;
  }

  async listConfigs(organisationId: string, workspace: string): Promise<SavedConfigRecord[]> {
    return this.queryPrefix<SavedConfigRecord>(`ORG#${organisationId}`, `CFG#${workspace}#`);
  }

  async deleteConfig(organisationId: string, workspace: string, id: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${organisationId}`, sk: `CFG#${workspace}#${id}` },
      }),
    );
  }

  /** False when there was nothing to delete. */
  async deleteJwtSettings(organisationId: string): Promise<boolean> {
    const out = await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${organisationId}`, sk: 'JWT' },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes !== undefined;
  }

  private async putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({ TableName: TABLE(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  private async queryPrefix<T>(pk: string, skPrefix: string): Promise<T[]> {
    return (await queryByPrefix(TABLE(), pk, skPrefix)) as T[];
  }
}

export function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';
}

function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as T;
}
