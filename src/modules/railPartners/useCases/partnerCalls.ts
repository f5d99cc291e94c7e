/**
 * The call log: every HTTP request an adapter sends to a rail partner, recorded at the one place they all
 * pass, the fetch the directory gives each adapter (recordingFetch). A row is inserted `sent` before the
 * request leaves (if it cannot be, the request is not sent and the caller's retry asks again), then completed
 * with the answer: a process killed in between leaves the row `sent`, which is what an auditor sees of a
 * request whose answer was never recorded. Recording is two single-row statements outside any transaction,
 * never inside the one that moves money, and never on the ledger writer's batch (adapters are called after
 * it, by the rail worker). What a row keeps is what the partner's describer reads (partners/callDescriptions.ts).
 *
 * Which transfer, wallet, sweep or collection a request was for is known to the adapter method that made
 * it, not to the request: withCallSubjects wraps the adapter so each method runs with its arguments' ids in
 * async-local context, which the fetch reads.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Deps } from '../../../app/deps.ts';
import { listPage } from '../../../app/reads.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { jsonObjectOf } from '../../../domain/json.ts';
import type { OutboundFetch } from '../../../outbound/guard.ts';
import { type OutboundCallEnd, recordedFetch } from '../../../outbound/recordedFetch.ts';
import type { RailPartnerConfig } from '../domain.ts';
import {
  type CallSubject,
  maskedCallPath,
  PARTNER_CALL_DESCRIBERS,
  type PartnerCallDescriber,
} from '../partners/callDescriptions.ts';
import {
  endPartnerCall,
  insertSentPartnerCall,
  listRailPartnerCalls,
  type PartnerCallEnd,
} from '../repository/partnerCalls.ts';

export { RAIL_PARTNER_CALL_OPERATIONS } from '../partners/callDescriptions.ts';
export { RAIL_PARTNER_CALL_STATUSES, type RailPartnerCallRecord } from '../repository/partnerCalls.ts';

const callSubjects = new AsyncLocalStorage<CallSubject>();

/** The argument fields that may name what a call is for (a Transfer's id, a request's references). */
const SUBJECT_FIELDS = ['id', 'idempotencyReference', 'externalTxId', 'walletId'] as const;

/** The ids among an adapter method's arguments, by their prefix; a transfer's own wallet is not its subject. */
export function subjectOf(adapterMethod: string, args: readonly unknown[]): CallSubject {
  const subject: CallSubject = { adapterMethod };
  const take = (value: unknown) => {
    if (typeof value !== 'string') return;
    if (value.startsWith(`${ID_PREFIXES.transfer}_`)) subject.transferId ??= value;
    else if (value.startsWith(`${ID_PREFIXES.wallet}_`)) subject.walletId ??= value;
    else if (value.startsWith(`${ID_PREFIXES.custodySweep}_`)) subject.sweepId ??= value;
    else if (value.startsWith(`${ID_PREFIXES.collection}_`)) subject.collectionId ??= value;
  };
  for (const arg of args) {
    if (typeof arg !== 'object' || arg === null) {
      take(arg);
      continue;
    }
    const fields = arg as Record<string, unknown>;
    const transfer = fields.transfer as { id?: unknown } | undefined;
    take(transfer?.id);
    for (const field of SUBJECT_FIELDS) take(fields[field]);
  }
  if (subject.transferId !== undefined) delete subject.walletId;
  return subject;
}

/** The adapter, each of its methods run with what its arguments name in context (for recordingFetch). */
export function withCallSubjects<T extends object>(adapter: T): T {
  return new Proxy(adapter, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return (...args: unknown[]) =>
        callSubjects.run(subjectOf(key, args), () =>
          (value as (...a: unknown[]) => unknown).apply(target, args),
        );
    },
  });
}

/** The request's path under the configured base URL (its whole path when it is not under it). */
function pathUnder(url: string, baseUrl: string): string {
  if (baseUrl !== '' && url.startsWith(baseUrl)) return url.slice(baseUrl.length) || '/';
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return '/';
  }
}

/** How a request ended, as a row keeps it: answered with what the describer reads, or its failure. */
function partnerCallEnd(
  describer: PartnerCallDescriber,
  end: OutboundCallEnd,
  answeredAt: Date,
): PartnerCallEnd {
  const timing = { durationMs: end.durationMs, answeredAt };
  if (!end.answered) {
    const status = end.failure === 'timeout' ? 'timeout' : 'failed';
    return {
      ...timing,
      status,
      failure: end.failure,
      httpStatus: null,
      partnerReference: null,
      partnerCode: null,
    };
  }
  const answer = describer.answer(end.status, end.body);
  return { ...timing, status: 'answered', httpStatus: end.status, failure: null, ...answer };
}

/**
 * `fetch`, each request recorded in rail_partner_calls for the configuration (`sent` first, then its end),
 * through the outbound calls' one recorder (src/outbound/recordedFetch.ts).
 */
export function recordingFetch(deps: Deps, config: RailPartnerConfig, fetch: OutboundFetch): OutboundFetch {
  const describer: PartnerCallDescriber | undefined = PARTNER_CALL_DESCRIBERS[config.partner];
  if (!describer) return fetch;
  const baseUrl = (config.settings.base_url ?? '').replace(/\/+$/, '');
  return recordedFetch(fetch, (url, init) => {
    const subject = callSubjects.getStore() ?? {};
    const method = init.method ?? 'GET';
    const path = pathUnder(url, baseUrl);
    const headers = init.headers ?? {};
    const described = describer.request({ method, path, headers, body: jsonObjectOf(init.body), subject });
    const id = deps.newId('railPartnerCall');
    return {
      id,
      sent: () =>
        insertSentPartnerCall(deps.store, {
          id,
          organizationId: config.organizationId,
          railPartnerId: config.id,
          partner: config.partner,
          operation: described.operation,
          method,
          path: maskedCallPath(path),
          transferId: subject.transferId ?? null,
          walletId: subject.walletId ?? null,
          sweepId: subject.sweepId ?? null,
          collectionId: subject.collectionId ?? null,
          ourReference: described.ourReference,
          createdAt: deps.now(),
        }),
      ended: (end) => endPartnerCall(deps.store, id, partnerCallEnd(describer, end, deps.now())),
    };
  });
}

/** The organization's partner calls, newest first, a page at a time. */
export const listOrganizationRailPartnerCalls = listPage(listRailPartnerCalls);
