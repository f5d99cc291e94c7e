/**
 * A batch's Idempotency-Keys. The first command that carries a key claims it; the claimed keys are locked
 * and their records read with the batch's other locks; then each command is answered: decided in this batch
 * (live), answered from its key's record, told the key is in flight, or (the same request again within the
 * batch) given the live command's outcome as a replay.
 */

import { type IdempotentOutcome, inFlightError, judgeRecord } from '../../../../app/idempotency.ts';
import { AppError } from '../../../../domain/errors.ts';
import {
  deleteIdempotencyRecord,
  type IdempotencyRecord,
  type ScopedKey,
} from '../../../../store/repositories/idempotency.ts';
import type { Queryable } from '../../../../store/store.ts';
import type { WriterCommand } from './writerCommands.ts';

/** What the batch answers each command, by its index, and which commands it decides. */
export interface BatchAnswers {
  outcomes: (IdempotentOutcome | AppError | undefined)[];
  /** The answer a repeat of command i replays: what was recorded for it, byte for byte. */
  recorded: (IdempotentOutcome | undefined)[];
  /** The commands decided in this batch. */
  live: number[];
  /** The same request again under a live command's key: answered with that command's outcome. */
  repeats: { index: number; first: number }[];
}

/** Which command claimed a key, and whether it is decided here (live) or the key is held elsewhere (busy). */
interface Claim {
  first: number;
  live: boolean;
  busy: boolean;
}

export function newBatchAnswers(commands: number): BatchAnswers {
  return { outcomes: new Array(commands), recorded: new Array(commands), live: [], repeats: [] };
}

/** A command's key within its organization. */
function scopedKey(c: WriterCommand): string {
  return `${c.idempotency.organizationId}\u0000${c.idempotency.key}`;
}

/** The key of command i, which has one. */
export function keyOf(commands: readonly WriterCommand[], i: number): ScopedKey {
  const c = commands[i] as WriterCommand;
  return { organizationId: c.idempotency.organizationId, key: c.idempotency.key as string };
}

/** Commands without a key are live at once; each key is claimed by its first command. Returns the claimants. */
export function claimKeys(commands: readonly WriterCommand[], live: number[]): number[] {
  const firsts = new Map<string, number>();
  for (const [i, command] of commands.entries()) {
    if (command.idempotency.key === undefined) live.push(i);
    else if (!firsts.has(scopedKey(command))) firsts.set(scopedKey(command), i);
  }
  return [...firsts.values()];
}

/** The records read with the keys, of the keys this batch holds: records of keys held elsewhere are ignored. */
export function recordsOfHeldKeys(
  commands: readonly WriterCommand[],
  claimed: readonly number[],
  locked: readonly boolean[],
  records: readonly IdempotencyRecord[],
): Map<string, IdempotencyRecord> {
  const heldKeys = new Set(
    claimed.filter((_, j) => locked[j]).map((i) => scopedKey(commands[i] as WriterCommand)),
  );
  return new Map<string, IdempotencyRecord>(
    records
      .map((r) => [`${r.organizationId}\u0000${r.key}`, r] as const)
      .filter(([scoped]) => heldKeys.has(scoped)),
  );
}

/**
 * Per key in this batch: the command that claimed it, and whether it is decided here (live) or the
 * key is held by another transaction (busy). The same request again receives the live command's
 * outcome as a replay, as it would had it waited for the commit; another request under that key is told
 * the key is in flight. When the key already has a stored outcome, each command is answered from it
 * (replay, or 422 for another request).
 */
export async function judgeClaims(
  tx: Queryable,
  commands: readonly WriterCommand[],
  claimed: readonly number[],
  locked: readonly boolean[],
  stored: ReadonlyMap<string, IdempotencyRecord>,
  now: Date,
  answers: BatchAnswers,
): Promise<Map<string, Claim>> {
  const { outcomes, live } = answers;
  const claims = new Map<string, Claim>();
  for (const [j, i] of claimed.entries()) {
    const command = commands[i] as WriterCommand;
    if (!locked[j]) {
      outcomes[i] = inFlightError();
      claims.set(scopedKey(command), { first: i, live: false, busy: true });
      continue;
    }
    try {
      const verdict = judgeRecord(
        stored.get(scopedKey(command)),
        { ...command.idempotency, ...keyOf(commands, i) },
        now,
      );
      // An expired record may linger until the pruner runs: the key is free again.
      if (verdict.expired) {
        await deleteIdempotencyRecord(tx, keyOf(commands, i).organizationId, keyOf(commands, i).key);
      }
      if (verdict.outcome) outcomes[i] = verdict.outcome;
      else live.push(i);
      claims.set(scopedKey(command), { first: i, live: !verdict.outcome, busy: false });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      outcomes[i] = error;
      claims.set(scopedKey(command), { first: i, live: false, busy: false });
    }
  }
  return claims;
}

/** Answers each command whose key an earlier command of the batch claimed (see judgeClaims). */
export function answerLaterClaimants(
  commands: readonly WriterCommand[],
  claims: ReadonlyMap<string, Claim>,
  stored: ReadonlyMap<string, IdempotencyRecord>,
  now: Date,
  answers: BatchAnswers,
): void {
  const { outcomes, repeats } = answers;
  for (const [i, command] of commands.entries()) {
    if (command.idempotency.key === undefined) continue;
    const earlier = claims.get(scopedKey(command)) as Claim;
    if (earlier.first === i) continue;
    if (earlier.busy) outcomes[i] = inFlightError();
    else if (earlier.live) {
      if (commands[earlier.first]?.idempotency.fingerprint === command.idempotency.fingerprint) {
        repeats.push({ index: i, first: earlier.first });
      } else {
        outcomes[i] = inFlightError();
      }
    } else {
      try {
        outcomes[i] = judgeRecord(
          stored.get(scopedKey(command)),
          { ...command.idempotency, ...keyOf(commands, i) },
          now,
        ).outcome;
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        outcomes[i] = error;
      }
    }
  }
}

/** Gives each repeat its live command's outcome, marked as a replay. */
export function replayRepeats({ outcomes, recorded, repeats }: BatchAnswers): void {
  for (const { index, first } of repeats) {
    const original = recorded[first];
    outcomes[index] = original && { ...original, replayed: true };
  }
}
