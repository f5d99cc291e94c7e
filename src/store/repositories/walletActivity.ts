/**
 * A wallet's recent activity, for the AML rules the ledger writer (and a conversion) evaluates: what it sent
 * and received in a window, transfers and conversions alike, and whether it paid a counterparty before. One
 * statement for a whole batch of transfers.
 */
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

/** Transfers and conversions together, newest first, at most `rowsMax`. */
function merged(transfers: unknown, conversions: unknown, rowsMax: number) {
  return [...movements(transfers), ...movements(conversions)]
    .sort((a, b) => b.at.getTime() - a.at.getTime())
    .slice(0, rowsMax);
}

/**
 * Each query's activity since `since`, at most `rowsMax` movements each way, in the order asked. Served by
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
      rowsMax,
      queries.map((q) => JSON.stringify(q.destination)),
    ],
  );
  return rows.map((row) => ({
    outgoing: merged(row.outgoing, row.converted_out, rowsMax),
    incoming: merged(row.incoming, row.converted_in, rowsMax),
    counterpartyKnown: row.counterparty_known === true,
    counterpartyKey: String(row.counterparty_key),
  }));
}
