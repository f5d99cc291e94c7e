/**
 * Evidence: use cases append their compliance decisions in their own transaction (so a decision and its
 * record commit together or not at all); operators list a resource's records and verify every chain.
 */
import {
  type ChainBreak,
  type ChainHead,
  chainEvidence,
  EVIDENCE_GENESIS_HASH,
  type EvidenceActor,
  type EvidenceDraft,
  type EvidenceKind,
  type EvidenceRecord,
  findChainBreak,
} from '../domain/evidence.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  type EvidenceSubject,
  findChainHead,
  insertEvidence,
  listChainOrganizations,
  listEvidenceOf,
  listOrganizationEvidence,
  lockChainHead,
  readChain,
} from '../store/repositories/evidence.ts';
import type { Queryable, Store } from '../store/store.ts';
import { beginWholeHistorySnapshot } from '../store/transactions.ts';
import type { Deps } from './deps.ts';
import { listPage } from './reads.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { EvidenceSubject } from '../store/repositories/evidence.ts';

/** Records read per statement while verifying a chain. */
export const EVIDENCE_VERIFY_BATCH_RECORDS = 1_000;

/** The actor of a request made with an API key. */
export function apiKeyActor(keyId: string, memberId?: string | null): EvidenceActor {
  return memberId ? { type: 'api_key', id: keyId, member: memberId } : { type: 'api_key', id: keyId };
}

export const SYSTEM_ACTOR: EvidenceActor = { type: 'system' };

/**
 * Appends drafts to their organizations' chains in the caller's transaction. Each chain's head row is
 * locked until commit, so concurrent appends queue rather than fork; chains are taken in organization id
 * order so two transactions appending to the same two chains cannot deadlock.
 */
export async function appendEvidence(
  tx: Queryable,
  deps: Deps,
  drafts: readonly EvidenceDraft[],
  /** Where the records' inserts go: the transaction, or a StatementChain sent with the caller's writes. */
  writes: Queryable = tx,
  /** Heads the caller has locked already in this transaction (lockChainHeads); others are locked here. */
  lockedHeads?: ReadonlyMap<string, ChainHead>,
): Promise<EvidenceRecord[]> {
  const byOrganization = new Map<string, EvidenceDraft[]>();
  for (const draft of drafts) {
    const list = byOrganization.get(draft.organizationId) ?? [];
    list.push(draft);
    byOrganization.set(draft.organizationId, list);
  }
  const now = deps.now();
  const appended: EvidenceRecord[] = [];
  for (const organizationId of [...byOrganization.keys()].sort()) {
    const own = byOrganization.get(organizationId) as EvidenceDraft[];
    const head = lockedHeads?.get(organizationId) ?? (await lockChainHead(tx, organizationId));
    const records = chainEvidence(
      head,
      own,
      own.map((draft) => draft.id ?? deps.newId('evidence')),
      now,
    );
    await insertEvidence(writes, records);
    appended.push(...records);
  }
  return appended;
}

/** Finds the organization's resource an evidence list is about, or throws its 404 (its owner's `get…`). */
export type EvidenceSubjectFinder = (deps: Deps, organizationId: string, id: string) => Promise<unknown>;

/** A resource's evidence, newest first; 404 when the resource is not the organization's. */
export async function listEvidence(
  deps: Deps,
  organizationId: string,
  subject: EvidenceSubject,
  subjectId: string,
  page: PageRequest,
  requireSubject: EvidenceSubjectFinder,
): Promise<Page<EvidenceRecord>> {
  await requireSubject(deps, organizationId, subjectId);
  const rows = await listEvidenceOf(deps.store, organizationId, subject, subjectId, page, page.limit + 1);
  return toPage(rows, page.limit);
}

/** The organization's whole chain, newest first, optionally of one kind. */
export const listOrganizationEvidenceRecords = listPage<{ kind?: EvidenceKind | undefined }, EvidenceRecord>(
  listOrganizationEvidence,
);

export interface EvidenceChainReport {
  organizationId: string;
  recordsVerified: number;
  /** The first broken record, or a head that disagrees with the last record; absent when intact. */
  break?: ChainBreak;
}

/**
 * `mkoba evidence verify`: recomputes every organization's chain from genesis in one snapshot. A chain
 * is intact when every record hashes to its stored hash, names its predecessor's hash, agrees with its
 * indexed columns, and the last one is where the head says the chain ends.
 */
export async function verifyEvidence(store: Store): Promise<EvidenceChainReport[]> {
  return store.transaction(async (tx) => {
    await beginWholeHistorySnapshot(tx);
    const reports: EvidenceChainReport[] = [];
    for (const organizationId of await listChainOrganizations(tx)) {
      let head = { sequence: 0, hash: EVIDENCE_GENESIS_HASH };
      let brokenAt: ChainBreak | undefined;
      let verified = 0;
      for (;;) {
        const batch = await readChain(tx, organizationId, head.sequence, EVIDENCE_VERIFY_BATCH_RECORDS);
        brokenAt = findChainBreak(head, batch);
        const last = batch.at(-1);
        if (brokenAt) {
          verified += batch.findIndex((r) => r.id === brokenAt?.recordId);
          break;
        }
        if (!last) break;
        verified += batch.length;
        head = { sequence: last.sequence, hash: last.hash };
      }
      const stored = await findChainHead(tx, organizationId);
      if (!brokenAt && (stored?.sequence !== head.sequence || stored.hash !== head.hash)) {
        brokenAt = {
          recordId: '',
          sequence: head.sequence,
          reason: stored
            ? `the chain head says it ends at ${stored.sequence}, but its records end at ${head.sequence}`
            : 'records exist but the chain has no head',
        };
      }
      reports.push({
        organizationId,
        recordsVerified: verified,
        ...(brokenAt ? { break: brokenAt } : {}),
      });
    }
    return reports;
  });
}
