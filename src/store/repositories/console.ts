/**
 * The operator console's rows: member passwords, sign-in links, sessions, and the read models its pages
 * need beyond the API's (transfer search, the day's figures, a subscription's delivery log, the names shown
 * beside customer and wallet ids).
 * Past 400 lines: every query here is the console's alone, read by src/app/console and nothing else.
 */

import type { MemberRole, MemberStatus } from '../../domain/access.ts';
import type { ConsoleSessionEndReason, ConsoleSignInMethod } from '../../domain/console.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { TransferStatus } from '../../domain/transfers.ts';
import type { Member } from '../../modules/authorization/index.ts';
import { TRANSFER_COLUMNS, transferFromRow } from '../../modules/transfers/index.ts';
import type { Queryable } from '../store.ts';
import { columnFinderBy, newestFirstLister } from './records.ts';
import { toBigInt, toDate } from './rows.ts';
import { type DeliveryView, withAttemptLogs } from './webhookDeliveryLog.ts';

// Passwords ---------------------------------------------------------------------------------------------

export const findPasswordHash = columnFinderBy('member_passwords', 'password_hash', String, 'member_id');

export async function savePasswordHash(
  db: Queryable,
  memberId: string,
  passwordHash: string,
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO member_passwords (member_id, password_hash, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (member_id) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
    [memberId, passwordHash, now],
  );
}

// Sign-in links -----------------------------------------------------------------------------------------

export interface SignInLinkRow {
  id: string;
  tokenHash: string;
  organizationId: string;
  memberId: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** The columns a sign-in link and a session share: the token's hash, whose it is, and when it was made. */
function tokenRowOf(row: Record<string, unknown>) {
  return {
    id: String(row.id),
    tokenHash: String(row.token_hash),
    organizationId: String(row.organization_id),
    memberId: String(row.member_id),
    createdAt: toDate(row.created_at),
  };
}

export async function insertSignInLink(db: Queryable, link: SignInLinkRow): Promise<void> {
  await db.query(
    `INSERT INTO console_sign_in_links (id, token_hash, organization_id, member_id, created_at, expires_at, used_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      link.id,
      link.tokenHash,
      link.organizationId,
      link.memberId,
      link.createdAt,
      link.expiresAt,
      link.usedAt,
    ],
  );
}

/**
 * Marks the link with this token used, if it is unused and unexpired, and returns it: one statement, so two
 * requests racing with the same link cannot both use it.
 */
export async function useSignInLink(
  db: Queryable,
  tokenHash: string,
  now: Date,
): Promise<SignInLinkRow | undefined> {
  const [row] = await db.query(
    `UPDATE console_sign_in_links SET used_at = $2
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
      RETURNING id, token_hash, organization_id, member_id, created_at, expires_at, used_at`,
    [tokenHash, now],
  );
  if (!row) return undefined;
  return {
    ...tokenRowOf(row),
    expiresAt: toDate(row.expires_at),
    usedAt: toDate(row.used_at),
  };
}

// Sessions ----------------------------------------------------------------------------------------------

export interface SessionRow {
  id: string;
  tokenHash: string;
  organizationId: string;
  memberId: string;
  method: ConsoleSignInMethod;
  createdAt: Date;
  lastSeenAt: Date;
  endedAt: Date | null;
  endReason: ConsoleSessionEndReason | null;
}

export interface SessionWithMember extends SessionRow {
  member: Member;
  organizationName: string;
}

export async function insertSession(db: Queryable, s: SessionRow): Promise<void> {
  await db.query(
    `INSERT INTO console_sessions (id, token_hash, organization_id, member_id, method, created_at, last_seen_at,
                                   ended_at, end_reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      s.id,
      s.tokenHash,
      s.organizationId,
      s.memberId,
      s.method,
      s.createdAt,
      s.lastSeenAt,
      s.endedAt,
      s.endReason,
    ],
  );
}

/** The live session with this token, with its member and organization name as they are now. */
export async function findLiveSession(
  db: Queryable,
  tokenHash: string,
): Promise<SessionWithMember | undefined> {
  const [row] = await db.query(
    `SELECT s.id, s.token_hash, s.organization_id, s.member_id, s.method, s.created_at, s.last_seen_at,
            m.email, m.name, m.roles, m.status, m.created_by, m.created_at AS member_created_at,
            m.updated_at AS member_updated_at, o.name AS organization_name
       FROM console_sessions s
       JOIN members m ON m.id = s.member_id
       JOIN organizations o ON o.id = s.organization_id
      WHERE s.token_hash = $1 AND s.ended_at IS NULL`,
    [tokenHash],
  );
  if (!row) return undefined;
  return {
    ...tokenRowOf(row),
    method: row.method as ConsoleSignInMethod,
    lastSeenAt: toDate(row.last_seen_at),
    endedAt: null,
    endReason: null,
    organizationName: String(row.organization_name),
    member: memberOfJoinedRow(row, row.member_id, row.member_created_at, row.member_updated_at),
  };
}

/**
 * The member of a row that joined members (email, name, roles, status, created_by, organization_id), with
 * the columns that the query had to rename beside another table's given apart.
 */
function memberOfJoinedRow(
  row: Record<string, unknown>,
  id: unknown,
  createdAt: unknown,
  updatedAt: unknown,
) {
  return {
    id: String(id),
    organizationId: String(row.organization_id),
    email: String(row.email),
    name: row.name === null ? null : String(row.name),
    roles: row.roles as MemberRole[],
    status: row.status as MemberStatus,
    createdBy: String(row.created_by),
    createdAt: toDate(createdAt),
    updatedAt: toDate(updatedAt),
  };
}

export async function touchSession(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(
    'UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1 AND ended_at IS NULL AND last_seen_at < $2',
    [id, now],
  );
}

export async function endSession(
  db: Queryable,
  id: string,
  reason: ConsoleSessionEndReason,
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE console_sessions SET ended_at = GREATEST($2::timestamptz, last_seen_at), end_reason = $3
      WHERE id = $1 AND ended_at IS NULL`,
    [id, now, reason],
  );
}

/** Ends every live session of a member (a password change ends the others). */
export async function endSessionsOfMember(
  db: Queryable,
  memberId: string,
  reason: ConsoleSessionEndReason,
  now: Date,
  exceptSessionId: string | null,
): Promise<number> {
  const rows = await db.query(
    `UPDATE console_sessions SET ended_at = GREATEST($2::timestamptz, last_seen_at), end_reason = $3
      WHERE member_id = $1 AND ended_at IS NULL AND id IS DISTINCT FROM $4 RETURNING id`,
    [memberId, now, reason, exceptSessionId],
  );
  return rows.length;
}

// Transfer search ---------------------------------------------------------------------------------------

export interface TransferSearch {
  /** Matched against the rail's reference, `metadata.reference` and a paybill's account reference. */
  reference?: string | undefined;
  /** The destination's phone number, exactly as stored (E.164). */
  phone?: string | undefined;
  status?: TransferStatus | undefined;
  createdGte?: Date | undefined;
  createdLte?: Date | undefined;
  startingAfter?: string | undefined;
}

/** Adds a query parameter and returns its placeholder (`$n`). */
function bind(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** Newest first; each condition given must hold. */
export const searchTransfers = newestFirstLister(
  { name: 'transfers', columns: TRANSFER_COLUMNS, prefix: ID_PREFIXES.transfer, fromRow: transferFromRow },
  (search: TransferSearch) => [['status', search.status]],
  (search, params) => {
    const conditions: string[] = [];
    if (search.phone !== undefined) {
      conditions.push(`destination ? 'phone' AND destination ->> 'phone' = ${bind(params, search.phone)}`);
    }
    if (search.reference !== undefined) {
      const p = bind(params, search.reference);
      conditions.push(
        `(rail_reference = ${p} OR metadata ->> 'reference' = ${p} OR destination ->> 'account_reference' = ${p})`,
      );
    }
    return conditions;
  },
);

// The day's figures -------------------------------------------------------------------------------------

/**
 * A read of an organization's transfers created in [from, to), grouped: `sql` takes the organization as $1
 * and the range as $2 and $3, and each row it returns is mapped by `fromRow`.
 */
function createdRangeRead<T>(sql: string, fromRow: (row: Record<string, unknown>) => T) {
  return async (db: Queryable, organizationId: string, from: Date, to: Date): Promise<T[]> =>
    (await db.query(sql, [organizationId, from, to])).map(fromRow);
}

export interface VolumeRow {
  currency: string;
  count: number;
  amountMinor: bigint;
}

/** Outbound and inbound transfers created in [from, to) that settled, by currency. */
export const settledVolume = createdRangeRead<VolumeRow>(
  `SELECT currency, count(*) AS n, sum(amount_minor) AS amount FROM transfers
      WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3 AND status = 'settled'
      GROUP BY currency ORDER BY currency`,
  (r) => ({
    currency: String(r.currency),
    count: Number(r.n),
    amountMinor: toBigInt(r.amount),
  }),
);

export interface RailOutcomeRow {
  rail: string;
  settled: number;
  failed: number;
  inFlight: number;
}

/** Per rail, transfers created in [from, to): settled, failed (failed or returned) and still in flight. */
export const railOutcomes = createdRangeRead<RailOutcomeRow>(
  `SELECT rail,
            count(*) FILTER (WHERE status = 'settled') AS settled,
            count(*) FILTER (WHERE status IN ('failed', 'returned')) AS failed,
            count(*) FILTER (WHERE status IN ('pending', 'processing', 'pending_approval', 'in_review')) AS in_flight
       FROM transfers
      WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
      GROUP BY rail ORDER BY rail`,
  (r) => ({
    rail: String(r.rail),
    settled: Number(r.settled),
    failed: Number(r.failed),
    inFlight: Number(r.in_flight),
  }),
);

export interface BucketCount {
  bucketStart: Date;
  created: number;
  settled: number;
  failed: number;
}

/** Transfers created in [from, to), counted per hour (UTC), with how many of them settled and failed. */
export const transfersPerHour = createdRangeRead<BucketCount>(
  `SELECT floor(extract(epoch FROM created_at) / 3600)::bigint AS hour, count(*) AS created,
            count(*) FILTER (WHERE status = 'settled') AS settled,
            count(*) FILTER (WHERE status IN ('failed', 'returned')) AS failed
       FROM transfers
      WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
      GROUP BY hour ORDER BY hour`,
  (r) => ({
    bucketStart: new Date(Number(toBigInt(r.hour)) * 3_600_000),
    created: Number(r.created),
    settled: Number(r.settled),
    failed: Number(r.failed),
  }),
);

/** The open work of the queues the home page links to. */
export async function openQueueCounts(
  db: Queryable,
  organizationId: string,
): Promise<{ approvals: number; reviews: number; alerts: number; exceptions: number }> {
  const [row] = await db.query(
    `SELECT (SELECT count(*) FROM approvals WHERE organization_id = $1 AND status = 'pending') AS approvals,
            (SELECT count(*) FROM review_cases WHERE organization_id = $1 AND status = 'open') AS reviews,
            (SELECT count(*) FROM aml_alerts WHERE organization_id = $1 AND status = 'open') AS alerts,
            (SELECT count(*) FROM reconciliation_exceptions WHERE organization_id = $1 AND status = 'open') AS exceptions`,
    [organizationId],
  );
  return {
    approvals: Number(row?.approvals ?? 0),
    reviews: Number(row?.reviews ?? 0),
    alerts: Number(row?.alerts ?? 0),
    exceptions: Number(row?.exceptions ?? 0),
  };
}

// A subscription's delivery log -------------------------------------------------------------------------

/** A subscription's deliveries, newest first, each with its attempts (and their response bodies). */
export async function listSubscriptionDeliveries(
  db: Queryable,
  organizationId: string,
  subscriptionId: string,
  rowsMax: number,
): Promise<DeliveryView[]> {
  const deliveries = await db.query(
    `SELECT id, event_id, subscription_id, status, attempts, next_attempt_at, last_attempt_at, last_status_code,
            last_error, succeeded_at, created_at
       FROM webhook_deliveries WHERE subscription_id = $1 AND organization_id = $2
      ORDER BY id DESC LIMIT $3`,
    [subscriptionId, organizationId, rowsMax],
  );
  return withAttemptLogs(db, deliveries);
}

// Sign-in look-ups ---------------------------------------------------------------------------------------

export interface SignInCandidate {
  member: Member;
  organizationName: string;
  passwordHash: string | null;
}

/** The active members with this email in every organization (at most rowsMax), organizations by name. */
export async function findSignInCandidates(
  db: Queryable,
  email: string,
  rowsMax: number,
): Promise<SignInCandidate[]> {
  const rows = await db.query(
    `SELECT m.id, m.organization_id, m.email, m.name, m.roles, m.status, m.created_by, m.created_at, m.updated_at,
            o.name AS organization_name, p.password_hash
       FROM members m
       JOIN organizations o ON o.id = m.organization_id
       LEFT JOIN member_passwords p ON p.member_id = m.id
      WHERE m.email = $1 AND m.status = 'active'
      ORDER BY o.name, m.id LIMIT $2`,
    [email, rowsMax],
  );
  return rows.map((row) => ({
    organizationName: String(row.organization_name),
    passwordHash: row.password_hash === null ? null : String(row.password_hash),
    member: memberOfJoinedRow(row, row.id, row.created_at, row.updated_at),
  }));
}

// Names beside ids --------------------------------------------------------------------------------------

export interface PartyNameRows {
  /** Each customer asked for, and each wallet's owner: their names by customer id. */
  customerNames: Map<string, string>;
  /** Each wallet asked for: its owner's customer id. */
  walletOwners: Map<string, string>;
}

/** The names a page shows beside the customer and wallet ids it lists, in one round trip. */
export async function findPartyNames(
  db: Queryable,
  organizationId: string,
  customerIds: readonly string[],
  walletIds: readonly string[],
): Promise<PartyNameRows> {
  const rows = await db.query(
    `SELECT NULL AS wallet_id, c.id AS customer_id, c.name
       FROM customers c WHERE c.organization_id = $1 AND c.id = ANY($2::text[])
     UNION ALL
     SELECT w.id, c.id, c.name
       FROM wallets w JOIN customers c ON c.organization_id = w.organization_id AND c.id = w.owner_id
      WHERE w.organization_id = $1 AND w.id = ANY($3::text[])`,
    [organizationId, [...new Set(customerIds)], [...new Set(walletIds)]],
  );
  const customerNames = new Map<string, string>();
  const walletOwners = new Map<string, string>();
  for (const row of rows) {
    customerNames.set(String(row.customer_id), String(row.name));
    if (row.wallet_id !== null) walletOwners.set(String(row.wallet_id), String(row.customer_id));
  }
  return { customerNames, walletOwners };
}
