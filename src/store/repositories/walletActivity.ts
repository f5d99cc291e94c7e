/**
 * A wallet's recent activity, for the AML rules the ledger writer (and a conversion) evaluates: what it sent
 * and received in a window, transfers and conversions alike, and whether it paid a counterparty before. One
 * statement for a whole batch of transfers.
 */
import { type MovementTally, NO_MOVEMENTS, type TallySpec } from '../../domain/activityTally.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { idBoundsOfCreated, toBigInt, toDate } from './rows.ts';

/** Transfers that moved no money do not count as activity. */
const ACTIVE_STATUSES_SQL = `status NOT IN ('failed', 'canceled', 'rejected', 'expired')`;
/**
 * Money that arrived: a settled transfer to the wallet. Written so that no index on status can serve it: with
 * `status = 'settled'` and no statistics yet (a table that was empty when last analyzed), the planner read
 * (organization_id, status, id) and filtered every settled transfer of the organization by destination, a
 * cost that grew with the organization's history. It must use (organization_id, destination_wallet_id, id).
 */
const SETTLED_SQL = `(t.status = 'settled') IS TRUE`;

export interface WalletActivityQuery {
  walletId: string;
  /** The destination the new transfer pays, as stored on transfers. */
  destination: unknown;
}

export interface WalletActivity {
  /**
   * Whether the lists hold every movement since `since`. When not (more than `rowsMax` of some kind), the
   * lists are not to be counted: tallyWalletActivity counts the window instead.
   */
  complete: boolean;
  /** Earlier transfers out of the wallet that did not fail, and conversions from it, newest first. */
  outgoing: { amountMinor: bigint; at: Date }[];
  /** Money that arrived in the wallet (settled transfers to it, conversions into it), newest first. */
  incoming: { amountMinor: bigint; at: Date }[];
  /** Whether the wallet paid this destination before (a transfer to it that did not fail). */
  counterpartyKnown: boolean;
  /** The destination's counterparty key, as stored on transfers. */
  counterpartyKey: string;
}

function movements(value: unknown): { amountMinor: bigint; at: Date }[] {
  const rows = (typeof value === 'string' ? JSON.parse(value) : value) as [string, string][];
  return rows.map(([amount, at]) => ({ amountMinor: toBigInt(amount), at: toDate(at) }));
}

/** Transfers and conversions together, newest first (all of both: a complete list is not cut). */
function merged(transfers: unknown, conversions: unknown) {
  return [...movements(transfers), ...movements(conversions)].sort((a, b) => b.at.getTime() - a.at.getTime());
}

function rowCount(value: unknown): number {
  return ((typeof value === 'string' ? JSON.parse(value) : value) as unknown[]).length;
}

/**
 * Each query's activity since `since`, at most `rowsMax` movements each way, in the order asked (one more
 * of each kind is read, to tell a complete list from a cut one). Served by
 * (organization_id, source_wallet_id, id), (organization_id, destination_wallet_id, id) with the id bound of
 * the window, (source_wallet_id, counterparty_key), and the conversions' (organization_id, from_wallet_id,
 * created_at) and (organization_id, to_wallet_id, created_at).
 */
export async function readWalletActivity(
  db: Queryable,
  organizationId: string,
  queries: readonly WalletActivityQuery[],
  since: Date,
  rowsMax: number,
): Promise<WalletActivity[]> {
  if (queries.length === 0) return [];
  const idFloor = idBoundsOfCreated(ID_PREFIXES.transfer, { createdGte: since }).idGte ?? '';
  const rows = await db.query(
    `SELECT q.i,
        (SELECT coalesce(json_agg(json_build_array(o.amount_minor::text, o.created_at) ORDER BY o.id DESC), '[]'::json)
           FROM (SELECT t.id, t.amount_minor, t.created_at FROM transfers t
                  WHERE t.organization_id = $1 AND t.source_wallet_id = q.wallet_id AND t.id >= $4
                    AND t.created_at >= $3 AND t.${ACTIVE_STATUSES_SQL}
                  ORDER BY t.id DESC LIMIT $5) o) AS outgoing,
        (SELECT coalesce(json_agg(json_build_array(n.amount_minor::text, n.created_at) ORDER BY n.id DESC), '[]'::json)
           FROM (SELECT t.id, t.amount_minor, t.created_at FROM transfers t
                  WHERE t.organization_id = $1 AND t.destination_wallet_id = q.wallet_id AND t.id >= $4
                    AND t.created_at >= $3 AND ${SETTLED_SQL}
                  ORDER BY t.id DESC LIMIT $5) n) AS incoming,
        (SELECT coalesce(json_agg(json_build_array(o.amount_minor::text, o.created_at)), '[]'::json)
           FROM (SELECT c.from_amount_minor AS amount_minor, c.created_at FROM conversions c
                  WHERE c.organization_id = $1 AND c.from_wallet_id = q.wallet_id AND c.created_at >= $3
                  ORDER BY c.created_at DESC LIMIT $5) o) AS converted_out,
        (SELECT coalesce(json_agg(json_build_array(n.amount_minor::text, n.created_at)), '[]'::json)
           FROM (SELECT c.to_amount_minor AS amount_minor, c.created_at FROM conversions c
                  WHERE c.organization_id = $1 AND c.to_wallet_id = q.wallet_id AND c.created_at >= $3
                  ORDER BY c.created_at DESC LIMIT $5) n) AS converted_in,
        EXISTS (SELECT 1 FROM transfers t
                 WHERE t.source_wallet_id = q.wallet_id
                   AND t.counterparty_key = mkoba_counterparty_key(q.destination::jsonb)
                   AND t.${ACTIVE_STATUSES_SQL}) AS counterparty_known,
        mkoba_counterparty_key(q.destination::jsonb) AS counterparty_key
       FROM unnest($2::text[], $6::text[]) WITH ORDINALITY AS q(wallet_id, destination, i)
      ORDER BY q.i`,
    [
      organizationId,
      queries.map((q) => q.walletId),
      since,
      idFloor,
      rowsMax === 0 ? 0 : rowsMax + 1,
      queries.map((q) => JSON.stringify(q.destination)),
    ],
  );
  return rows.map((row) => ({
    complete: [row.outgoing, row.incoming, row.converted_out, row.converted_in].every(
      (list) => rowCount(list) <= rowsMax,
    ),
    outgoing: merged(row.outgoing, row.converted_out),
    incoming: merged(row.incoming, row.converted_in),
    counterpartyKnown: row.counterparty_known === true,
    counterpartyKey: String(row.counterparty_key),
  }));
}

/** One count: a wallet's movements of a spec's direction and band created in [since, before) (null: no end). */
export interface TallyQuery {
  walletId: string;
  spec: TallySpec;
  since: Date;
  before: Date | null;
}

/** A query's count and sum, and when the oldest movement it counted was created (null: none). */
export interface CountedMovements extends MovementTally {
  oldestAt: Date | null;
}

/**
 * Each query's count and sum, in the order asked: what the activity lists hold, and more, for a wallet
 * busier than they show; or the slice of a window that time has moved past. One statement; the same
 * movements as readWalletActivity (transfers that moved money and conversions out; settled transfers and
 * conversions in), over the same indexes, each query's range bounding the ids read.
 */
export async function tallyWalletActivity(
  db: Queryable,
  organizationId: string,
  queries: readonly TallyQuery[],
): Promise<CountedMovements[]> {
  if (queries.length === 0) return [];
  const rows = await db.query(
    `SELECT q.i, tally.count, tally.sum, tally.oldest
       FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::text[], $7::text[],
                   $8::bigint[], $9::bigint[])
            WITH ORDINALITY AS q(wallet_id, direction, since, before, id_gte, id_lte, gte, lt, i)
      CROSS JOIN LATERAL (
        SELECT count(*) AS count, coalesce(sum(m.amount_minor), 0) AS sum, min(m.created_at) AS oldest FROM (
          SELECT t.amount_minor, t.created_at FROM transfers t
           WHERE q.direction = 'outgoing' AND t.organization_id = $1 AND t.source_wallet_id = q.wallet_id
             AND t.id >= q.id_gte AND (q.id_lte IS NULL OR t.id <= q.id_lte)
             AND t.created_at >= q.since AND (q.before IS NULL OR t.created_at < q.before)
             AND t.${ACTIVE_STATUSES_SQL}
          UNION ALL
          SELECT t.amount_minor, t.created_at FROM transfers t
           WHERE q.direction = 'incoming' AND t.organization_id = $1 AND t.destination_wallet_id = q.wallet_id
             AND t.id >= q.id_gte AND (q.id_lte IS NULL OR t.id <= q.id_lte)
             AND t.created_at >= q.since AND (q.before IS NULL OR t.created_at < q.before)
             AND ${SETTLED_SQL}
          UNION ALL
          SELECT c.from_amount_minor, c.created_at FROM conversions c
           WHERE q.direction = 'outgoing' AND c.organization_id = $1 AND c.from_wallet_id = q.wallet_id
             AND c.created_at >= q.since AND (q.before IS NULL OR c.created_at < q.before)
          UNION ALL
          SELECT c.to_amount_minor, c.created_at FROM conversions c
           WHERE q.direction = 'incoming' AND c.organization_id = $1 AND c.to_wallet_id = q.wallet_id
             AND c.created_at >= q.since AND (q.before IS NULL OR c.created_at < q.before)
        ) m (amount_minor, created_at)
         WHERE (q.gte IS NULL OR m.amount_minor >= q.gte) AND (q.lt IS NULL OR m.amount_minor < q.lt)
      ) tally`,
    [
      organizationId,
      queries.map((q) => q.walletId),
      queries.map((q) => q.spec.direction),
      queries.map((q) => q.since),
      queries.map((q) => q.before),
      queries.map((q) => idBoundsOfCreated(ID_PREFIXES.transfer, { createdGte: q.since }).idGte ?? ''),
      queries.map((q) =>
        q.before === null
          ? null
          : (idBoundsOfCreated(ID_PREFIXES.transfer, { createdLte: q.before }).idLte ?? null),
      ),
      queries.map((q) => (q.spec.amountGteMinor === undefined ? null : q.spec.amountGteMinor.toString())),
      queries.map((q) => (q.spec.amountLtMinor === undefined ? null : q.spec.amountLtMinor.toString())),
    ],
  );
  const tallies: CountedMovements[] = queries.map(() => ({ ...NO_MOVEMENTS, oldestAt: null }));
  for (const row of rows) {
    tallies[Number(row.i) - 1] = {
      count: Number(row.count),
      sumMinor: toBigInt(row.sum),
      oldestAt: row.oldest === null ? null : toDate(row.oldest),
    };
  }
  return tallies;
}
