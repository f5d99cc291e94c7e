/** Deposit addresses, deposits, conversion rates, quotes and conversions. */
import type { DigitalAsset, DigitalAssetNetwork } from '../../domain/digitalAssets.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import type {
  ChainTransactionState,
  Conversion,
  ConversionDirection,
  ConversionQuote,
  ConversionQuoteStatus,
  Deposit,
  DepositAddress,
  DepositStatus,
} from '../../domain/stablecoins.ts';
import type { Queryable } from '../store.ts';
import { claimDueRows, type KeysetFilter, listNewestFirst, toBigInt, toDate } from './rows.ts';

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const date = (v: unknown) => (v === null || v === undefined ? null : toDate(v));
const lock = (forUpdate: boolean | undefined) => (forUpdate ? ' FOR UPDATE' : '');

// --- Deposit addresses -----------------------------------------------------------------------------------

const ADDRESS_COLUMNS = 'id, organization_id, wallet_id, asset, network, address, created_at';

function addressFromRow(row: Record<string, unknown>): DepositAddress {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    walletId: String(row.wallet_id),
    asset: row.asset as DigitalAsset,
    network: row.network as DigitalAssetNetwork,
    address: String(row.address),
    createdAt: toDate(row.created_at),
  };
}

/**
 * Inserts the wallet's address on the network unless it has one; returns the one it has either way. No
 * conflict target: a concurrent request for the same wallet and network collides on both unique indexes
 * (the address is a function of the wallet and network), and either must end in the existing row.
 */
export async function insertDepositAddressIfAbsent(
  db: Queryable,
  a: DepositAddress,
): Promise<DepositAddress> {
  const [inserted] = await db.query(
    `INSERT INTO deposit_addresses (${ADDRESS_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT DO NOTHING RETURNING ${ADDRESS_COLUMNS}`,
    [a.id, a.organizationId, a.walletId, a.asset, a.network, a.address, a.createdAt],
  );
  if (inserted) return addressFromRow(inserted);
  const [existing] = await db.query(
    `SELECT ${ADDRESS_COLUMNS} FROM deposit_addresses WHERE wallet_id = $1 AND network = $2`,
    [a.walletId, a.network],
  );
  if (!existing) throw new Error('deposit address vanished after insert conflict');
  return addressFromRow(existing);
}

export async function listDepositAddresses(
  db: Queryable,
  organizationId: string,
  walletId: string,
): Promise<DepositAddress[]> {
  const rows = await db.query(
    `SELECT ${ADDRESS_COLUMNS} FROM deposit_addresses WHERE organization_id = $1 AND wallet_id = $2 ORDER BY id`,
    [organizationId, walletId],
  );
  return rows.map(addressFromRow);
}

/** The deposit address on a network, whichever organization holds it (the chain knows no organizations). */
export async function findDepositAddressByAddress(
  db: Queryable,
  network: DigitalAssetNetwork,
  address: string,
): Promise<DepositAddress | undefined> {
  const [row] = await db.query(
    `SELECT ${ADDRESS_COLUMNS} FROM deposit_addresses WHERE network = $1 AND address = $2`,
    [network, address],
  );
  return row && addressFromRow(row);
}

// --- Deposits --------------------------------------------------------------------------------------------

const DEPOSIT_COLUMNS = `id, organization_id, wallet_id, deposit_address_id, asset, network, address, tx_hash, log_index,
  amount_minor, confirmations, chain_state, required_confirmations, status, transfer_id, travel_rule_evidence_id,
  travel_rule_required, next_check_at, created_at, updated_at, credited_at, reorged_at, travel_rule_received, held_at,
  rejected_at`;

function depositFromRow(row: Record<string, unknown>): Deposit {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    walletId: String(row.wallet_id),
    depositAddressId: String(row.deposit_address_id),
    asset: row.asset as DigitalAsset,
    network: row.network as DigitalAssetNetwork,
    address: String(row.address),
    txHash: String(row.tx_hash),
    logIndex: Number(row.log_index),
    amountMinor: toBigInt(row.amount_minor),
    confirmations: Number(row.confirmations),
    chainState: row.chain_state as ChainTransactionState,
    requiredConfirmations: Number(row.required_confirmations),
    status: row.status as DepositStatus,
    transferId: text(row.transfer_id),
    travelRuleEvidenceId: text(row.travel_rule_evidence_id),
    travelRuleRequired: row.travel_rule_required === null ? null : row.travel_rule_required === true,
    nextCheckAt: date(row.next_check_at),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
    creditedAt: date(row.credited_at),
    reorgedAt: date(row.reorged_at),
    travelRuleReceived: row.travel_rule_received === null ? null : row.travel_rule_received === true,
    heldAt: date(row.held_at),
    rejectedAt: date(row.rejected_at),
  };
}

/**
 * Records a deposit unless the chain transfer (network, hash, log index) is already a live deposit: the
 * unique index decides, so a notification repeated at the same moment in two processes records one.
 * Returns the new deposit, or undefined when it was there already.
 */
export async function insertDepositIfNew(db: Queryable, d: Deposit): Promise<Deposit | undefined> {
  const [row] = await db.query(
    `INSERT INTO deposits (${DEPOSIT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
             $23, $24, $25)
     ON CONFLICT (network, tx_hash, log_index) WHERE status <> 'reorged' DO NOTHING
     RETURNING ${DEPOSIT_COLUMNS}`,
    [
      d.id,
      d.organizationId,
      d.walletId,
      d.depositAddressId,
      d.asset,
      d.network,
      d.address,
      d.txHash,
      d.logIndex,
      d.amountMinor.toString(),
      d.confirmations,
      d.chainState,
      d.requiredConfirmations,
      d.status,
      d.transferId,
      d.travelRuleEvidenceId,
      d.travelRuleRequired,
      d.nextCheckAt,
      d.createdAt,
      d.updatedAt,
      d.creditedAt,
      d.reorgedAt,
      d.travelRuleReceived,
      d.heldAt,
      d.rejectedAt,
    ],
  );
  return row && depositFromRow(row);
}

export async function saveDeposit(db: Queryable, d: Deposit): Promise<void> {
  await db.query(
    `UPDATE deposits SET confirmations = $3, chain_state = $4, status = $5, transfer_id = $6, next_check_at = $7,
       updated_at = $8, credited_at = $9, reorged_at = $10, travel_rule_evidence_id = $11, travel_rule_required = $12,
       travel_rule_received = $13, held_at = $14, rejected_at = $15
     WHERE organization_id = $1 AND id = $2`,
    [
      d.organizationId,
      d.id,
      d.confirmations,
      d.chainState,
      d.status,
      d.transferId,
      d.nextCheckAt,
      d.updatedAt,
      d.creditedAt,
      d.reorgedAt,
      d.travelRuleEvidenceId,
      d.travelRuleRequired,
      d.travelRuleReceived,
      d.heldAt,
      d.rejectedAt,
    ],
  );
}

export async function findDeposit(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<Deposit | undefined> {
  const [row] = await db.query(
    `SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE organization_id = $1 AND id = $2${lock(options.forUpdate)}`,
    [organizationId, id],
  );
  return row && depositFromRow(row);
}

/** The live deposit of a chain transfer (not a reorged one), locked when asked. */
export async function findDepositByChainTransfer(
  db: Queryable,
  network: DigitalAssetNetwork,
  txHash: string,
  logIndex: number,
  options: { forUpdate?: boolean } = {},
): Promise<Deposit | undefined> {
  const [row] = await db.query(
    `SELECT ${DEPOSIT_COLUMNS} FROM deposits
      WHERE network = $1 AND tx_hash = $2 AND log_index = $3 AND status <> 'reorged'${lock(options.forUpdate)}`,
    [network, txHash, logIndex],
  );
  return row && depositFromRow(row);
}

/** The organization's pending deposits on a network, locked (the simulated chain advancing). */
export async function lockPendingDeposits(
  db: Queryable,
  organizationId: string,
  network: DigitalAssetNetwork,
): Promise<Deposit[]> {
  const rows = await db.query(
    `SELECT ${DEPOSIT_COLUMNS} FROM deposits
      WHERE organization_id = $1 AND network = $2 AND status = 'pending' ORDER BY id FOR UPDATE`,
    [organizationId, network],
  );
  return rows.map(depositFromRow);
}

/** Due deposits, claimed: skipped by any other worker until this transaction ends. */
export async function claimDueDeposits(
  db: Queryable,
  now: Date,
  rowsMax: number,
  excludedIds: readonly string[],
): Promise<Deposit[]> {
  const rows = await claimDueRows(db, {
    table: 'deposits',
    columns: DEPOSIT_COLUMNS,
    now,
    rowsMax,
    excludedIds,
  });
  return rows.map(depositFromRow);
}

export async function listDeposits(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter & { status?: DepositStatus | undefined; walletId?: string | undefined },
  rowsMax: number,
): Promise<Deposit[]> {
  const rows = await listNewestFirst(db, {
    table: 'deposits',
    columns: DEPOSIT_COLUMNS,
    prefix: ID_PREFIXES.deposit,
    organizationId,
    filter,
    equal: [
      ['status', filter.status],
      ['wallet_id', filter.walletId],
    ],
    rowsMax,
  });
  return rows.map(depositFromRow);
}

// --- Conversion rates ------------------------------------------------------------------------------------

export interface StoredConversionRate {
  organizationId: string;
  from: Currency;
  to: Currency;
  rate: string;
  /** The version in force (null: set before rates had versions). */
  versionId: string | null;
  updatedAt: Date;
}

const RATE_COLUMNS = 'organization_id, from_currency, to_currency, rate, version_id, updated_at';

function rateFromRow(row: Record<string, unknown>): StoredConversionRate {
  return {
    organizationId: String(row.organization_id),
    from: String(row.from_currency) as Currency,
    to: String(row.to_currency) as Currency,
    rate: String(row.rate),
    versionId: text(row.version_id),
    updatedAt: toDate(row.updated_at),
  };
}

export async function listConversionRates(
  db: Queryable,
  organizationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredConversionRate[]> {
  const rows = await db.query(
    `SELECT ${RATE_COLUMNS} FROM conversion_rates
      WHERE organization_id = $1 ORDER BY from_currency, to_currency${lock(options.forUpdate)}`,
    [organizationId],
  );
  return rows.map(rateFromRow);
}

export async function findConversionRate(
  db: Queryable,
  organizationId: string,
  from: Currency,
  to: Currency,
): Promise<StoredConversionRate | undefined> {
  const [row] = await db.query(
    `SELECT ${RATE_COLUMNS} FROM conversion_rates
      WHERE organization_id = $1 AND from_currency = $2 AND to_currency = $3`,
    [organizationId, from, to],
  );
  return row && rateFromRow(row);
}

/** Why a rate version applied (docs/STABLECOINS.md). */
export type RateVersionBasis = 'within_band' | 'sandbox_first_rate' | 'defaults' | 'approved';

export interface ConversionRateVersion {
  id: string;
  organizationId: string;
  from: Currency;
  to: Currency;
  rate: string;
  previousRate: string | null;
  basis: RateVersionBasis;
  setBy: string | null;
  createdAt: Date;
}

/** Appends rate versions (never updated or deleted). */
export async function insertConversionRateVersions(
  db: Queryable,
  versions: readonly ConversionRateVersion[],
): Promise<void> {
  if (versions.length === 0) return;
  await db.query(
    `INSERT INTO conversion_rate_versions
       (id, organization_id, from_currency, to_currency, rate, previous_rate, basis, set_by, created_at)
     SELECT v.id, $1, v.f, v.t, v.r, v.p, v.b, v.s, $9
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
         AS v (id, f, t, r, p, b, s)`,
    [
      versions[0]?.organizationId,
      versions.map((v) => v.id),
      versions.map((v) => v.from),
      versions.map((v) => v.to),
      versions.map((v) => v.rate),
      versions.map((v) => v.previousRate),
      versions.map((v) => v.basis),
      versions.map((v) => v.setBy),
      versions[0]?.createdAt,
    ],
  );
}

/** The pairs (`FROM/TO`) among `pairs` that ever had a rate version in the organization. */
export async function pairsWithRateHistory(
  db: Queryable,
  organizationId: string,
  pairs: readonly { from: Currency; to: Currency }[],
): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await db.query(
    `SELECT DISTINCT v.from_currency, v.to_currency FROM conversion_rate_versions v
       JOIN unnest($2::text[], $3::text[]) AS p (f, t) ON p.f = v.from_currency AND p.t = v.to_currency
      WHERE v.organization_id = $1`,
    [organizationId, pairs.map((p) => p.from), pairs.map((p) => p.to)],
  );
  return new Set(rows.map((r) => `${String(r.from_currency)}/${String(r.to_currency)}`));
}

/** Replaces the organization's rates whole, each naming its version. */
export async function replaceConversionRates(
  db: Queryable,
  organizationId: string,
  rates: readonly { from: Currency; to: Currency; rate: string; versionId: string | null }[],
  now: Date,
): Promise<void> {
  await db.query('DELETE FROM conversion_rates WHERE organization_id = $1', [organizationId]);
  if (rates.length === 0) return;
  await db.query(
    `INSERT INTO conversion_rates (organization_id, from_currency, to_currency, rate, version_id, updated_at)
     SELECT $1, f, t, r, v, $6 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS x (f, t, r, v)`,
    [
      organizationId,
      rates.map((r) => r.from),
      rates.map((r) => r.to),
      rates.map((r) => r.rate),
      rates.map((r) => r.versionId),
      now,
    ],
  );
}

/**
 * Writes rates and their versions (basis `defaults`) unless the organization has rates; true when this
 * call wrote them. One statement, so the versions exist only with the rates that name them.
 */
export async function insertConversionRatesIfNone(
  db: Queryable,
  organizationId: string,
  rates: readonly { id: string; from: Currency; to: Currency; rate: string }[],
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `WITH none AS (SELECT NOT EXISTS (SELECT 1 FROM conversion_rates WHERE organization_id = $1) AS yes),
     versions AS (
       INSERT INTO conversion_rate_versions
         (id, organization_id, from_currency, to_currency, rate, previous_rate, basis, set_by, created_at)
       SELECT id, $1, f, t, r, NULL, 'defaults', NULL, $6
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS x (id, f, t, r), none
        WHERE none.yes
       RETURNING id, from_currency, to_currency, rate)
     INSERT INTO conversion_rates (organization_id, from_currency, to_currency, rate, version_id, updated_at)
     SELECT $1, from_currency, to_currency, rate, id, $6 FROM versions
     ON CONFLICT DO NOTHING RETURNING 1`,
    [
      organizationId,
      rates.map((r) => r.id),
      rates.map((r) => r.from),
      rates.map((r) => r.to),
      rates.map((r) => r.rate),
      now,
    ],
  );
  return rows.length > 0;
}

// --- Quotes and conversions ------------------------------------------------------------------------------

const QUOTE_COLUMNS = `id, organization_id, customer_id, from_wallet_id, to_wallet_id, direction, from_currency, to_currency,
  from_amount_minor, to_amount_minor, rate, fee_minor, status, conversion_id, created_at, expires_at, fee_schedule_version,
  fee_rule, rate_version_id`;

function quoteFromRow(row: Record<string, unknown>): ConversionQuote {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    fromWalletId: String(row.from_wallet_id),
    toWalletId: String(row.to_wallet_id),
    direction: row.direction as ConversionDirection,
    fromCurrency: String(row.from_currency) as Currency,
    toCurrency: String(row.to_currency) as Currency,
    fromAmountMinor: toBigInt(row.from_amount_minor),
    toAmountMinor: toBigInt(row.to_amount_minor),
    rate: String(row.rate),
    feeMinor: toBigInt(row.fee_minor),
    status: row.status as ConversionQuoteStatus,
    conversionId: text(row.conversion_id),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    feeScheduleVersion: row.fee_schedule_version === null ? null : Number(row.fee_schedule_version),
    feeRule: text(row.fee_rule),
    rateVersionId: text(row.rate_version_id),
  };
}

export async function insertConversionQuote(db: Queryable, q: ConversionQuote): Promise<void> {
  await db.query(
    `INSERT INTO conversion_quotes (${QUOTE_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    [
      q.id,
      q.organizationId,
      q.customerId,
      q.fromWalletId,
      q.toWalletId,
      q.direction,
      q.fromCurrency,
      q.toCurrency,
      q.fromAmountMinor.toString(),
      q.toAmountMinor.toString(),
      q.rate,
      q.feeMinor.toString(),
      q.status,
      q.conversionId,
      q.createdAt,
      q.expiresAt,
      q.feeScheduleVersion,
      q.feeRule,
      q.rateVersionId,
    ],
  );
}

export async function findConversionQuote(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConversionQuote | undefined> {
  const [row] = await db.query(
    `SELECT ${QUOTE_COLUMNS} FROM conversion_quotes WHERE organization_id = $1 AND id = $2${lock(options.forUpdate)}`,
    [organizationId, id],
  );
  return row && quoteFromRow(row);
}

export async function markQuoteExecuted(db: Queryable, quoteId: string, conversionId: string): Promise<void> {
  await db.query(
    `UPDATE conversion_quotes SET status = 'executed', conversion_id = $2 WHERE id = $1 AND status = 'open'`,
    [quoteId, conversionId],
  );
}

const CONVERSION_COLUMNS = `id, organization_id, quote_id, customer_id, from_wallet_id, to_wallet_id, direction, from_currency,
  to_currency, from_amount_minor, to_amount_minor, rate, fee_minor, debit_entry_id, credit_entry_id, created_by, created_at,
  fee_schedule_version, fee_rule, rate_version_id`;

function conversionFromRow(row: Record<string, unknown>): Conversion {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    quoteId: String(row.quote_id),
    customerId: String(row.customer_id),
    fromWalletId: String(row.from_wallet_id),
    toWalletId: String(row.to_wallet_id),
    direction: row.direction as ConversionDirection,
    fromCurrency: String(row.from_currency) as Currency,
    toCurrency: String(row.to_currency) as Currency,
    fromAmountMinor: toBigInt(row.from_amount_minor),
    toAmountMinor: toBigInt(row.to_amount_minor),
    rate: String(row.rate),
    feeMinor: toBigInt(row.fee_minor),
    debitEntryId: String(row.debit_entry_id),
    creditEntryId: String(row.credit_entry_id),
    createdBy: text(row.created_by),
    createdAt: toDate(row.created_at),
    feeScheduleVersion: row.fee_schedule_version === null ? null : Number(row.fee_schedule_version),
    feeRule: text(row.fee_rule),
    rateVersionId: text(row.rate_version_id),
  };
}

export async function insertConversion(db: Queryable, c: Conversion): Promise<void> {
  await db.query(
    `INSERT INTO conversions (${CONVERSION_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      c.id,
      c.organizationId,
      c.quoteId,
      c.customerId,
      c.fromWalletId,
      c.toWalletId,
      c.direction,
      c.fromCurrency,
      c.toCurrency,
      c.fromAmountMinor.toString(),
      c.toAmountMinor.toString(),
      c.rate,
      c.feeMinor.toString(),
      c.debitEntryId,
      c.creditEntryId,
      c.createdBy,
      c.createdAt,
      c.feeScheduleVersion,
      c.feeRule,
      c.rateVersionId,
    ],
  );
}

export async function findConversion(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Conversion | undefined> {
  const [row] = await db.query(
    `SELECT ${CONVERSION_COLUMNS} FROM conversions WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row && conversionFromRow(row);
}

export async function listConversions(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<Conversion[]> {
  const rows = await listNewestFirst(db, {
    table: 'conversions',
    columns: CONVERSION_COLUMNS,
    prefix: ID_PREFIXES.conversion,
    organizationId,
    filter,
    equal: [],
    rowsMax,
  });
  return rows.map(conversionFromRow);
}
