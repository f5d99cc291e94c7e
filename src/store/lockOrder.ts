/**
 * The one order every transaction that moves money takes its locks in, so that no two of them can deadlock
 * on each other: the resource it acts on first (a transfer, an approval, a payment batch, a loan, a quote),
 * then ledger accounts (in id order, one statement: `lockAccounts`), then the organization's evidence chain
 * head (an organization-wide lock, taken when evidence is appended). A transaction that appended evidence
 * and then locks a wallet's account waits for that account while holding the chain head; the ledger writer
 * holds accounts and waits for the chain head: a deadlock. Within the accounts stage the order is the ids':
 * an account a transaction locks for the first time must sort after every account it already holds (one that
 * it holds already may be locked again: that waits for nothing). A transaction that holds `x` and then locks
 * `w` (w < x) in a second statement waits for `w` while a writer that locked `w, x` in one statement holds
 * `w` and waits for `x`: a deadlock. So a transaction locks every account it will touch in one statement
 * (`lockAccounts`), or in statements whose new accounts each sort after the last. Each lock step declares
 * itself here, and where the order is enforced (the test suite turns it on), a step out of order throws at
 * once, so a path that breaks it fails its tests instead of deadlocking under load.
 */

export const LOCK_STAGES = ['accounts', 'evidence_chain'] as const;
export type LockStage = (typeof LOCK_STAGES)[number];

interface HeldLocks {
  /** The furthest stage this transaction has reached. */
  stage: number;
  /** Accounts it holds: locking one of them again waits for nothing. */
  accounts: Set<string>;
  /** The greatest id among them (in the order `lockAccounts` sorts): a new account must sort after it. */
  last: string | undefined;
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
    held = { stage: -1, accounts: new Set(), last: undefined };
    heldByTransaction.set(tx, held);
  }
  return held;
}

export class LockOrderViolation extends Error {}

/**
 * Declares that `tx` is about to lock these ledger accounts (one statement). Throws, where enforced, when it
 * already holds a later stage's lock, or when an account it does not hold yet sorts before one it holds.
 */
export function lockingAccounts(tx: object, accountIds: readonly string[]): void {
  const held = heldBy(tx);
  const fresh = accountIds.filter((id) => !held.accounts.has(id));
  if (fresh.length > 0 && enforced) {
    if (held.stage > LOCK_STAGES.indexOf('accounts')) {
      throw new LockOrderViolation(
        `lock order: ledger accounts ${fresh.join(', ')} locked after the ${LOCK_STAGES[held.stage]} lock`,
      );
    }
    const last = held.last;
    const early = last === undefined ? [] : fresh.filter((id) => id < last);
    if (early.length > 0) {
      throw new LockOrderViolation(
        `lock order: ledger accounts ${early.join(', ')} locked after account ${last}, which sorts after them: lock every account the transaction touches in one statement`,
      );
    }
  }
  for (const id of fresh) {
    held.accounts.add(id);
    if (held.last === undefined || id > held.last) held.last = id;
  }
  held.stage = Math.max(held.stage, LOCK_STAGES.indexOf('accounts'));
}

/** Declares that `tx` is about to take a lock of a later stage. */
export function lockingStage(tx: object, stage: Exclude<LockStage, 'accounts'>): void {
  const held = heldBy(tx);
  held.stage = Math.max(held.stage, LOCK_STAGES.indexOf(stage));
}
