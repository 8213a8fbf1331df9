import { blobStore } from './blob-store';

// Responses the gateway made itself (the Responses API translated for Anthropic, Bedrock and Gemini),
// kept in the blob store so that `GET` and `DELETE /v1/responses/{id}` and `previous_response_id` work
// there as on OpenAI. One object per response, under its organisation and workspace; they expire with
// the log bodies (the bucket's lifecycle). A deleted response is overwritten by a tombstone: the
// model functions may write objects, never delete them.

export interface StoredResponse {
  /** The Response object as the client received it. */
  response: Record<string, unknown>;
  /** The conversation up to and including this response, as Responses input items, for a follow-up. */
  items: unknown[];
}

interface Scope {
  organisationId: string;
  workspace: string;
}

// Ids the gateway makes are `resp_` and base-36 characters: anything else cannot name a stored object.
const ID = /^resp_[a-z0-9]{1,64}$/;

const keyOf = (scope: Scope, id: string) =>
  `responses/${encodeURIComponent(scope.organisationId)}/${encodeURIComponent(scope.workspace)}/${id}.json`;

export const responseStore = {
  async put(scope: Scope, stored: StoredResponse): Promise<void> {
    const id = String(stored.response.id);
    if (!ID.test(id)) throw new Error('not a gateway response id');
    await blobStore().put(keyOf(scope, id), JSON.stringify(stored));
  },

  /** The stored response, `deleted` for a deleted one, undefined for an id never stored here. */
  async get(scope: Scope, id: string): Promise<StoredResponse | 'deleted' | undefined> {
    if (!ID.test(id)) return undefined;
    const text = await blobStore().get(keyOf(scope, id));
    if (text === undefined) return undefined;
    const value = JSON.parse(text) as StoredResponse | { deleted: true };
    return 'deleted' in value ? 'deleted' : value;
  },

  async delete(scope: Scope, id: string): Promise<void> {
    await blobStore().put(keyOf(scope, id), JSON.stringify({ deleted: true }));
  },
};
