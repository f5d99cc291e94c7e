/**
 * The one order every transaction that moves money takes its locks in, so that no two of them can deadlock
 * on each other: the resource it acts on first (a transfer, an approval, a payment batch, a loan, a quote),
 * then ledger accounts (in id order, one statement: `lockAccounts`), then the organization's evidence chain
 * head (an organization-wide lock, taken when evidence is appended). A transaction that appended evidence
 * and then locks a wallet's account waits for that account while holding the chain head; the ledger writer
 * holds accounts and waits for the chain head: a deadlock. Each lock step declares itself here, and where the
 * order is enforced (the test suite turns it on), a step out of order throws at once, so a path that breaks it
 * fails its tests instead of deadlocking under load.
 */

export const LOCK_STAGES = ['accounts', 'evidence_chain'] as const;
export type LockStage = (typeof LOCK_STAGES)[number];

interface HeldLocks {
  /** The furthest stage this transaction has reached. */
  stage: number;
  /** Accounts it holds: locking one of them again waits for nothing. */
  accounts: Set<string>;
}

const heldByTransaction = new WeakMap<object, HeldLocks>();

/** The transaction a Queryable runs in: a pipeline's statements run in the transaction it wraps. */
function transactionOf(db: object): object {
  return (db as { lockOwner?: object }).lockOwner ?? db;
}
let enforced = false;

/** Turns the check on (tests) or off (the default: a violation costs nothing until it deadlocks). */
export function enforceLockOrder(on: boolean): void {
  enforced = on;
}

function heldBy(db: object): HeldLocks {
  const tx = transactionOf(db);
  let held = heldByTransaction.get(tx);
  if (!held) {
    held = { stage: -1, accounts: new Set() };
    heldByTransaction.set(tx, held);
  }
  return held;
}

export class LockOrderViolation extends Error {}

/** Declares that `tx` is about to lock these ledger accounts. */
export function lockingAccounts(tx: object, accountIds: readonly string[]): void {
  const held = heldBy(tx);
  const fresh = accountIds.filter((id) => !held.accounts.has(id));
  if (fresh.length > 0 && held.stage > LOCK_STAGES.indexOf('accounts') && enforced) {
    throw new LockOrderViolation(
      `lock order: ledger accounts ${fresh.join(', ')} locked after the ${LOCK_STAGES[held.stage]} lock`,
    );
  }
  for (const id of fresh) held.accounts.add(id);
  held.stage = Math.max(held.stage, LOCK_STAGES.indexOf('accounts'));
}

/** Declares that `tx` is about to take a lock of a later stage. */
export function lockingStage(tx: object, stage: Exclude<LockStage, 'accounts'>): void {
  const held = heldBy(tx);
  held.stage = Math.max(held.stage, LOCK_STAGES.indexOf(stage));
}
