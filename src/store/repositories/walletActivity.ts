/**
 * A wallet's recent activity, for the AML rules the ledger writer (and a conversion) evaluates: what it sent
 * and received in a window, transfers and conversions alike, and whether it paid a counterparty before. One
 * statement for a whole batch of transfers.
 */
import { type MovementTally, type TallySpec, tallyKey } from '../../domain/activityTally.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { idBoundsOfCreated, toBigInt, toDate } from './rows.ts';

/** Transfers that moved no money do not count as activity. */
const ACTIVE_STATUSES_SQL = `status NOT IN ('failed', 'canceled', 'rejected', 'expired')`;

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
                    AND t.created_at >= $3 AND t.status = 'settled'
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

/**
 * For each wallet, each spec's count and sum of the movements in its window ending at `at`: what the
 * activity lists hold, and more, for a wallet busier than they show. One statement; the same movements as
 * readWalletActivity (transfers that moved money and conversions out; settled transfers and conversions
 * in), over the same indexes, each spec's window bounding the ids read.
 */
export async function tallyWalletActivity(
  db: Queryable,
  organizationId: string,
  walletIds: readonly string[],
  specs: readonly TallySpec[],
  at: Date,
): Promise<Map<string, MovementTally>[]> {
  if (walletIds.length === 0 || specs.length === 0) return walletIds.map(() => new Map());
  const since = specs.map((s) => new Date(at.getTime() - s.windowSeconds * 1_000));
  const rows = await db.query(
    `SELECT w.i, s.j, tally.count, tally.sum
       FROM unnest($2::text[]) WITH ORDINALITY AS w(wallet_id, i)
      CROSS JOIN unnest($4::text[], $5::timestamptz[], $6::text[], $7::bigint[], $8::bigint[])
            WITH ORDINALITY AS s(direction, since, id_floor, gte, lt, j)
      CROSS JOIN LATERAL (
        SELECT count(*) AS count, coalesce(sum(m.amount_minor), 0) AS sum FROM (
          SELECT t.amount_minor FROM transfers t
           WHERE s.direction = 'outgoing' AND t.organization_id = $1 AND t.source_wallet_id = w.wallet_id
             AND t.id >= s.id_floor AND t.created_at >= s.since AND t.created_at <= $3
             AND t.${ACTIVE_STATUSES_SQL}
          UNION ALL
          SELECT t.amount_minor FROM transfers t
           WHERE s.direction = 'incoming' AND t.organization_id = $1 AND t.destination_wallet_id = w.wallet_id
             AND t.id >= s.id_floor AND t.created_at >= s.since AND t.created_at <= $3
             AND t.status = 'settled'
          UNION ALL
          SELECT c.from_amount_minor FROM conversions c
           WHERE s.direction = 'outgoing' AND c.organization_id = $1 AND c.from_wallet_id = w.wallet_id
             AND c.created_at >= s.since AND c.created_at <= $3
          UNION ALL
          SELECT c.to_amount_minor FROM conversions c
           WHERE s.direction = 'incoming' AND c.organization_id = $1 AND c.to_wallet_id = w.wallet_id
             AND c.created_at >= s.since AND c.created_at <= $3
        ) m (amount_minor)
         WHERE (s.gte IS NULL OR m.amount_minor >= s.gte) AND (s.lt IS NULL OR m.amount_minor < s.lt)
      ) tally`,
    [
      organizationId,
      walletIds,
      at,
      specs.map((s) => s.direction),
      since,
      since.map((d) => idBoundsOfCreated(ID_PREFIXES.transfer, { createdGte: d }).idGte ?? ''),
      specs.map((s) => (s.amountGteMinor === undefined ? null : s.amountGteMinor.toString())),
      specs.map((s) => (s.amountLtMinor === undefined ? null : s.amountLtMinor.toString())),
    ],
  );
  const tallies = walletIds.map(() => new Map<string, MovementTally>());
  for (const row of rows) {
    const spec = specs[Number(row.j) - 1];
    const map = tallies[Number(row.i) - 1];
    if (!spec || !map) continue;
    map.set(tallyKey(spec), { count: Number(row.count), sumMinor: toBigInt(row.sum) });
  }
  return tallies;
}
