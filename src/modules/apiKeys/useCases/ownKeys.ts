/**
 * A member's key of their own, governed: a key with nothing beyond `read`/`write` is stored at once; one with
 * more (`compliance`, `admin`) is a governed change of kind `api_key` when the organization's policy asks for
 * approval. Its secret is generated now and shown once to the proposer, but the change stores only its hash
 * (sealed) and display prefix: the key does not exist, so does not authenticate, until the approving vote
 * stores it (applyPendingOwnKey). Rejected, expired or canceled, it never works.
 */

import type { Deps } from '../../../app/deps.ts';
import type { GovernedChange } from '../../../domain/governedChanges.ts';
import type { ApiKeyRow } from '../../../store/repositories/apiKeys.ts';
import type { Queryable } from '../../../store/store.ts';
import { proposeIfGoverned } from '../../authorization/index.ts';
import {
  insertOwnApiKey,
  type KeyRequester,
  type OwnKeyInput,
  pendingKeyPayload,
  planOwnApiKey,
} from './ownKeyIssuing.ts';

export type OwnKeyOutcome =
  /** Stored: it works from the commit on. */
  | { status: 'created'; key: string; record: ApiKeyRow }
  /** Waiting for approval: the secret is shown now and works only once the change is applied. */
  | { status: 'pending'; key: string; change: GovernedChange };

export async function createOwnApiKeyGoverned(
  tx: Queryable,
  deps: Deps,
  requester: KeyRequester,
  input: OwnKeyInput,
): Promise<OwnKeyOutcome> {
  const { key, record } = await planOwnApiKey(tx, deps, requester, input);
  const change = await proposeIfGoverned(
    tx,
    deps,
    requester.organizationId,
    { kind: 'api_key', action: 'create', targetId: null, payload: pendingKeyPayload(record) },
    requester.actor,
  );
  if (change) return { status: 'pending', key, change };
  await insertOwnApiKey(tx, deps, record, requester.actor);
  return { status: 'created', key, record };
}
