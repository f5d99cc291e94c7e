/**
 * Evidence: every compliance decision as an append-only record, hash-chained per organization. A record's
 * payload is its canonical JSON text (RFC 8785, JSON Canonicalization Scheme), which names the previous
 * record's hash; its hash is the SHA-256 of that text. So anyone holding an export can check the chain
 * with nothing but a JSON parser and SHA-256: re-canonicalise each payload, hash it, compare with the next
 * record's `previous_hash`.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson.ts';
import { AppError } from './errors.ts';

/** The `previous_hash` of an organization's first record. */
export const EVIDENCE_GENESIS_HASH = '0'.repeat(64);

/** What a record is evidence of; a closed vocabulary that grows with each decision the service records. */
export const EVIDENCE_KINDS = [
  'transfer.decision',
  'transfer.release',
  'verification.result',
  'screening.result',
  'limit.decision',
  'aml.evaluation',
  'review.disposition',
  'alert.disposition',
  'wallet.freeze',
  'wallet.unfreeze',
  'wallet.close',
  'risk.override',
  'aml.rules.update',
  'member.update',
  'policy.update',
  'policy.decision',
  'approval.vote',
  'approval.decision',
  'payment_batch.decision',
  'reconciliation.resolution',
  'transfer.travel_rule',
  'travel_rule.settings.update',
  'digital_asset.routes.update',
  'rail_partner.update',
  'rail_callback.exception',
  'transfer.reversal',
  'verification_provider.update',
  'verification_provider.remove',
  'fee_schedule.update',
  'trust_account.update',
  'safeguarding.balance',
  'safeguarding.check',
  'safeguarding.sweep',
  'deposit.travel_rule',
  'conversion.rates.update',
  'deposit.decision',
  'conversion.decision',
  'launch_gate.update',
  'launch_gate.override',
  'loan.decision',
  'loan.write_off',
  'digital_accounts.settings.update',
  'api_key.created',
  'api_key.revoked',
  'change.proposal',
  'change.application',
  'customer.update',
  'wallet.update',
  'webhook_subscription.promote',
] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/**
 * Who decided: the service itself, the API key an operator used (and the member it acts for, if any), or
 * the console session a member signed in with.
 */
export type EvidenceActor =
  | { type: 'system' }
  | { type: 'api_key'; id: string; member?: string | undefined }
  | { type: 'console_session'; id: string; member: string };

/** How an actor is named in a record: `system` for the service itself, otherwise its key's or session's id. */
export function actorName(actor: EvidenceActor): string {
  return actor.type === 'system' ? 'system' : actor.id;
}

/**
 * A person's decisions: votes on approvals, clearing or rejecting a review, freezing or unfreezing a wallet.
 * Each is taken by a member (a key that acts for one, or a console session) or by the service itself, never
 * by a key that acts for no member, whatever its scopes: a server key cannot decide, so no decision can be
 * recorded without the person who took it.
 */
export function requireMemberActor(actor: EvidenceActor, decision: string): void {
  if (actor.type === 'api_key' && actor.member === undefined) {
    throw new AppError({
      status: 403,
      code: 'member_required',
      title: 'Forbidden',
      detail: `Only a member may ${decision}: use an API key that acts for a member; a key that acts for no member (a server key) never decides.`,
    });
  }
}

/** A JSON value that canonicalises the same everywhere: no floats, no undefined, no Dates. */
export type EvidenceValue =
  | string
  | number
  | boolean
  | null
  | readonly EvidenceValue[]
  | { readonly [key: string]: EvidenceValue };

/** What a use case asks to record. The resources it concerns are indexed so each can list its evidence. */
export interface EvidenceDraft {
  /** The record's id when the caller must name it before it is appended (a transfer's Travel Rule data). */
  id?: string | undefined;
  organizationId: string;
  kind: EvidenceKind;
  actor: EvidenceActor;
  transferId?: string | undefined;
  customerId?: string | undefined;
  walletId?: string | undefined;
  /** The decision's inputs, the rule or list version that decided, and the outcome. */
  data: { readonly [key: string]: EvidenceValue };
}

export interface EvidenceRecord {
  id: string;
  organizationId: string;
  sequence: number;
  kind: EvidenceKind;
  actor: EvidenceActor;
  transferId: string | null;
  customerId: string | null;
  walletId: string | null;
  data: { readonly [key: string]: EvidenceValue };
  createdAt: Date;
  previousHash: string;
  /** The exact text hashed. */
  payload: string;
  hash: string;
}

/** Where an organization's chain stands: its last record's sequence and hash (0 and genesis when empty). */
export interface ChainHead {
  sequence: number;
  hash: string;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The SHA-256 of a value's canonical JSON text (null for an absent value): what a record keeps of personal
 * data it must not hold in clear, since the chain is never rewritten. Whoever holds the value can check it.
 */
export function valueDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value ?? null));
}

interface Unrecordable {
  /** Below the value walked: `.key` and `[index]` steps. */
  path: string;
  problem: string;
}

/**
 * The first place in a value that would not canonicalise the same everywhere (a float, an unsafe integer, a
 * type JSON cannot carry), else undefined. The path is built only for that place: every transfer's evidence
 * is walked, and naming each node on the way cost more than the walk.
 */
function firstUnrecordable(value: unknown): Unrecordable | undefined {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return undefined;
  if (typeof value === 'number') {
    return Number.isSafeInteger(value)
      ? undefined
      : { path: '', problem: `is ${value}: only safe integers (or strings) are recorded` };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstUnrecordable(value[i]);
      if (found) return { ...found, path: `[${i}]${found.path}` };
    }
    return undefined;
  }
  if (typeof value === 'object') {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const found = firstUnrecordable((value as Record<string, unknown>)[key]);
      if (found) return { ...found, path: `.${key}${found.path}` };
    }
    return undefined;
  }
  return { path: '', problem: `is a ${typeof value}, which JSON cannot carry` };
}

/** Throws on a value that would not canonicalise the same everywhere, naming where it is. */
function assertCanonicalisable(value: unknown, path: string): void {
  const found = firstUnrecordable(value);
  if (found) throw new TypeError(`evidence ${path}${found.path} ${found.problem}`);
}

/** The canonical text of a record: every field but the hash itself. */
export function evidencePayload(record: Omit<EvidenceRecord, 'payload' | 'hash'>): string {
  const body = {
    id: record.id,
    organization_id: record.organizationId,
    sequence: record.sequence,
    previous_hash: record.previousHash,
    kind: record.kind,
    actor: actorName(record.actor),
    // Only present for a key or session that acts for a member, so records made before members existed hash alike.
    ...(record.actor.type !== 'system' && record.actor.member !== undefined
      ? { actor_member: record.actor.member }
      : {}),
    transfer_id: record.transferId,
    customer_id: record.customerId,
    wallet_id: record.walletId,
    data: record.data,
    created_at: record.createdAt.toISOString(),
  };
  assertCanonicalisable(body, 'record');
  return canonicalJson(body);
}

/**
 * Chains drafts onto a head, in order: each record gets the next sequence and names the hash before it.
 * Pure: ids and the time are the caller's.
 */
export function chainEvidence(
  head: ChainHead,
  drafts: readonly EvidenceDraft[],
  ids: readonly string[],
  now: Date,
): EvidenceRecord[] {
  let { sequence, hash } = head;
  return drafts.map((draft, i) => {
    const id = ids[i];
    if (id === undefined) throw new RangeError('one id per evidence draft');
    sequence += 1;
    const unhashed = {
      id,
      organizationId: draft.organizationId,
      sequence,
      kind: draft.kind,
      actor: draft.actor,
      transferId: draft.transferId ?? null,
      customerId: draft.customerId ?? null,
      walletId: draft.walletId ?? null,
      data: draft.data,
      createdAt: now,
      previousHash: hash,
    };
    const payload = evidencePayload(unhashed);
    hash = sha256Hex(payload);
    return { ...unhashed, payload, hash };
  });
}

/** A record as read back: the indexed columns beside the payload they were derived from. */
export type StoredEvidence = Pick<
  EvidenceRecord,
  | 'id'
  | 'organizationId'
  | 'sequence'
  | 'kind'
  | 'transferId'
  | 'customerId'
  | 'walletId'
  | 'createdAt'
  | 'previousHash'
  | 'payload'
  | 'hash'
>;

export interface ChainBreak {
  recordId: string;
  sequence: number;
  reason: string;
}

/**
 * Checks a run of one organization's records, in sequence order, continuing from `head` (the record
 * before the run, or genesis). Returns the first break: a gap in the sequence, a payload that does not
 * hash to the stored hash, a payload that disagrees with the stored columns, or a link to the wrong
 * previous hash.
 */
export function findChainBreak(head: ChainHead, records: readonly StoredEvidence[]): ChainBreak | undefined {
  let expected = head;
  for (const record of records) {
    const at = { recordId: record.id, sequence: record.sequence };
    if (record.sequence !== expected.sequence + 1) {
      return { ...at, reason: `sequence ${record.sequence} follows ${expected.sequence}` };
    }
    if (record.previousHash !== expected.hash) {
      return { ...at, reason: 'previous_hash is not the hash of the record before it' };
    }
    if (sha256Hex(record.payload) !== record.hash) {
      return { ...at, reason: 'the payload does not hash to the stored hash' };
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(record.payload) as Record<string, unknown>;
    } catch {
      return { ...at, reason: 'the payload is not JSON' };
    }
    const columns: Record<string, unknown> = {
      id: record.id,
      organization_id: record.organizationId,
      sequence: record.sequence,
      previous_hash: record.previousHash,
      kind: record.kind,
      transfer_id: record.transferId,
      customer_id: record.customerId,
      wallet_id: record.walletId,
      created_at: record.createdAt.toISOString(),
    };
    if (
      Object.entries(columns).some(([k, v]) => parsed[k] !== v) ||
      canonicalJson(parsed) !== record.payload
    ) {
      return { ...at, reason: 'the payload disagrees with the record it is stored with' };
    }
    expected = { sequence: record.sequence, hash: record.hash };
  }
  return undefined;
}
