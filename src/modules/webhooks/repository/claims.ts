/** The dispatcher's claim: due deliveries leased, with their events and where they go, in one statement. */
import type { PayloadVersion } from '../../../domain/payloadVersions.ts';
import type { PayloadFormat } from '../../../domain/webhooks.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { isTrue, toDate, toJsonObject } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface ClaimedDelivery {
  id: string;
  organizationId: string;
  eventId: string;
  subscriptionId: string;
  attempts: number;
  eventType: string;
  eventData: Record<string, unknown>;
  eventCreatedAt: Date;
  url: string;
  payloadFormat: PayloadFormat;
  apiVersion: PayloadVersion;
  /** The subscription's failure window as the claim saw it: a success need not touch a closed one. */
  subscriptionFailing: boolean;
}

/**
 * The claim, one statement: the candidates' snapshot and the lock are one round trip. A candidate another
 * dispatcher claimed meanwhile is either locked (skipped) or re-checked on its newest version by the lock and
 * dropped. The oldest n due rows of a subscription are among its oldest n pending ones and its run-out leases.
 * A subscription on which another owner holds live leases gives this one nothing; its holder's queue is
 * topped up to the depth. A row's lease covers the rounds of sends queued ahead of it, and the rows come back
 * in that order (each subscription's in due order), the order they are sent in.
 * Parameters: $1 now, $2 rows at most, $3 rows held per subscription at most (the queue's depth), $4 the
 * lease's end for the first round, $5 the lease owner (NULL for a caller with no queue), $6 sends at once
 * per subscription, $7 milliseconds each round ahead adds to the lease.
 */
const CLAIM_DUE_DELIVERIES = `WITH leased AS (
       SELECT id, subscription_id, next_attempt_at, lease_expires_at > $1 AS live,
              lease_owner IS NOT DISTINCT FROM $5::text AS mine
         FROM webhook_deliveries WHERE status = 'delivering'
     ), held AS (
       SELECT subscription_id, COUNT(*) FILTER (WHERE mine) AS mine, COUNT(*) FILTER (WHERE NOT mine) AS others
         FROM leased WHERE live GROUP BY subscription_id
     ), due AS (
       SELECT d.id, d.next_attempt_at, s.id AS subscription_id FROM webhook_subscriptions s
        CROSS JOIN LATERAL (
          SELECT p.id, p.next_attempt_at FROM webhook_deliveries p
           WHERE p.subscription_id = s.id AND p.status = 'pending' AND p.next_attempt_at <= $1
           ORDER BY p.next_attempt_at, p.id LIMIT $3
        ) AS d
        WHERE s.status = 'enabled' AND s.deleted_at IS NULL
       UNION ALL
       SELECT l.id, l.next_attempt_at, l.subscription_id FROM leased l
         JOIN webhook_subscriptions s ON s.id = l.subscription_id AND s.status = 'enabled' AND s.deleted_at IS NULL
        WHERE NOT l.live
     ), ranked AS (
       SELECT due.*, ROW_NUMBER() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at, id) AS rank FROM due
     ), candidates AS (
       SELECT r.id, COALESCE(h.mine, 0) + r.rank - 1 AS position
         FROM ranked r LEFT JOIN held h ON h.subscription_id = r.subscription_id
        WHERE COALESCE(h.others, 0) = 0 AND r.rank + COALESCE(h.mine, 0) <= $3
        ORDER BY r.next_attempt_at, r.id
        LIMIT $2
     ), locked AS (
       SELECT id FROM webhook_deliveries WHERE id = ANY(ARRAY(SELECT id FROM candidates))
          AND ((status = 'pending' AND next_attempt_at <= $1) OR (status = 'delivering' AND lease_expires_at <= $1))
          FOR UPDATE SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d SET status = 'delivering', attempts = d.attempts + 1, lease_owner = $5::text,
              lease_expires_at = $4::timestamptz + (q.position / $6::integer) * $7::integer * interval '1 millisecond'
         FROM locked JOIN candidates q ON q.id = locked.id WHERE d.id = locked.id
       RETURNING d.id, d.organization_id, d.event_id, d.subscription_id, d.attempts, q.position
     )
     SELECT c.*, e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at,
            s.url, s.payload_format, s.api_version, s.failing_since IS NOT NULL AS subscription_failing
       FROM claimed c JOIN events e ON e.id = c.event_id JOIN webhook_subscriptions s ON s.id = c.subscription_id
      ORDER BY c.position, c.id`;

const claimedFromRow = rowMapper<ClaimedDelivery>({
  id: String,
  organizationId: String,
  eventId: String,
  subscriptionId: String,
  attempts: Number,
  eventType: String,
  eventData: toJsonObject<Record<string, unknown>>,
  eventCreatedAt: toDate,
  url: String,
  payloadFormat: stored,
  apiVersion: stored,
  subscriptionFailing: isTrue,
});

/**
 * A dispatcher's queue: it holds up to `perSubscriptionMax` rows of a subscription and sends `sendsAtOnce` of
 * them at a time, so the rows queued behind others get a lease one time-out longer per round ahead of them.
 */
export interface ClaimQueue {
  /** The dispatcher's own id: its live leases are its queue, anyone else's keep it off the subscription. */
  owner: string;
  sendsAtOnce: number;
  /** What each round of sends ahead of a row adds to its lease. */
  roundMs: number;
}

/**
 * Claims due deliveries (and ones whose lease ran out: a dispatcher died holding them), at most
 * `perSubscriptionMax` held per subscription, skipping rows other dispatchers hold, and leases them
 * until leaseUntil (a queued row: a round more for each round of sends ahead of it). The attempt number is
 * taken here, so a crash after sending still counts the attempt. Without a queue, every live lease of a
 * subscription counts against its limit, whoever holds it.
 *
 * The candidates are read per enabled subscription: at most `perSubscriptionMax` of its oldest due pending
 * rows from the index on (subscription_id, next_attempt_at), so a tick reads one index probe per
 * subscription whatever the backlog, due or not, and never a disabled subscription's backlog. Leased rows
 * (live ones count against their subscription's limit; run-out ones are due again) are few, at most the
 * dispatchers' held rows, and read at once from their own index.
 */
export async function claimDueDeliveries(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  rowsMax: number,
  perSubscriptionMax: number,
  queue?: ClaimQueue,
): Promise<ClaimedDelivery[]> {
  const rows = await db.query(CLAIM_DUE_DELIVERIES, [
    now,
    rowsMax,
    perSubscriptionMax,
    leaseUntil,
    queue?.owner ?? null,
    queue?.sendsAtOnce ?? perSubscriptionMax,
    queue?.roundMs ?? 0,
  ]);
  return rows.map(claimedFromRow);
}
