/**
 * Sending what a claim took: each attempt on its own, in a send slot (sendSlots.ts, which knows where the
 * delivery stands now), signed afresh, its outcome handed to the recorder and retried there until it commits.
 */
import type { Deps } from '../../../app/deps.ts';
import { renderEvent } from '../../../domain/events.ts';
import {
  signatureHeader,
  unixSeconds,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNING_SECRETS_MAX,
} from '../../../domain/signing.ts';
import type { WebhookDeliveryOutcome } from '../../../metrics.ts';
import { unlessHandedBack } from '../../../workers/periodic.ts';
import type { ClaimedDelivery } from '../repository/claims.ts';
import { type DeliveryToSend, releaseDelivery } from '../repository/deliveries.ts';
import { openStoredSecret } from '../repository/secrets.ts';
import {
  type AttemptOutcome,
  type DispatcherOptions,
  isSuccess,
  mkobaFailure,
  type OutcomeRecorder,
} from './attempts.ts';
import type { SendResult } from './httpSender.ts';
import type { SendSlot, SendSlots } from './sendSlots.ts';

/** The exact bytes sent for a delivery: the event in the subscription's payload version and spelling. */
export function deliveryBody(delivery: ClaimedDelivery, deps: Deps): string {
  const event = {
    id: delivery.eventId,
    organizationId: delivery.organizationId,
    type: delivery.eventType,
    resourceId: null,
    data: delivery.eventData,
    createdAt: delivery.eventCreatedAt,
  };
  return JSON.stringify(renderEvent(event, deps.environment, delivery.apiVersion, delivery.payloadFormat));
}

/** Waits before trying again to record an outcome (a dropped connection, a database failing over). */
const OUTCOME_RECORD_RETRY_DELAYS_MS: readonly number[] = [100, 1_000];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a dispatcher's sends share: where errors go, the outcome recorder, the send slots, the hand-back. */
export interface SendingContext {
  onError: (error: unknown) => void;
  record: OutcomeRecorder;
  slots: SendSlots;
  /** Fires when a stopping dispatcher gives up on sends in flight: their deliveries are given back. */
  handBack?: AbortSignal;
}

/**
 * Sends what one claim took, each attempt on its own in a send slot, in claim order. Resolves once every
 * outcome is recorded (or the delivery was given back unsent).
 */
export function sendClaimed(
  deps: Deps,
  options: DispatcherOptions,
  claimed: readonly ClaimedDelivery[],
  on: SendingContext,
): Promise<void>[] {
  on.slots.hold(claimed);
  // Secrets come sealed with each read of where a delivery stands: each opened once for the claim's sends.
  const opened = new Map<string, string>();
  const secretsOf = (current: DeliveryToSend) =>
    current.secrets
      .map((secret) => {
        if (secret.sealed === null) return openStoredSecret(deps.keyring, secret);
        let clear = opened.get(secret.sealed);
        if (clear === undefined) {
          clear = openStoredSecret(deps.keyring, secret);
          opened.set(secret.sealed, clear);
        }
        return clear;
      })
      .filter((secret) => secret.length > 0)
      // Newest first: should more secrets be live than a header carries, the newest sign.
      .slice(0, WEBHOOK_SIGNING_SECRETS_MAX);
  return claimed.map((delivery) => sendOne(deps, options, delivery, secretsOf, on));
}

/**
 * One attempt, from the claim to its recorded outcome. Never throws: whatever fails in between (the event
 * cannot be rendered, signing, the sender itself) is a failed attempt with `error_class: internal`, and an
 * outcome that cannot be recorded is retried, then recorded bare; so the retry schedule and exhaustion
 * apply to every delivery, and the lease running out is only the way out of a dispatcher that died. A
 * delivery still waiting for its slot when the dispatcher stops is given back at once.
 */
async function sendOne(
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  secretsOf: (current: DeliveryToSend) => string[],
  on: SendingContext,
): Promise<void> {
  const { onError } = on;
  const giveBack = () => retried(() => releaseDelivery(deps.store, delivery.id, delivery.attempts), onError);
  const slot = await on.slots.take(delivery);
  if (!slot) {
    on.slots.forget(delivery.id);
    await giveBack();
    return;
  }
  const startedAt = deps.now();
  let outcome: AttemptOutcome | undefined;
  try {
    const settled = await unlessHandedBack(
      attempt(deps, options, delivery, { slot, secretsOf }, startedAt),
      on.handBack,
    );
    if (settled === 'handed_back') {
      // The dispatcher is stopping: the claim (and its attempt) is undone; another dispatcher sends it now.
      slot.free(false);
      await giveBack();
      return;
    }
    outcome = settled;
  } catch (error) {
    onError(error);
    outcome = mkobaFailure('internal', 'Mkoba could not prepare or send this attempt', startedAt, deps.now());
  }
  if (!outcome) {
    slot.free(false);
    return;
  }
  // The slot is held until the outcome is recorded: a dispatcher that dies sends again at most what its
  // slots held, the in-flight limit per subscription.
  const failed = !isSuccess(outcome.result);
  try {
    await recordWithFallback(deps, options, delivery, outcome, on);
  } finally {
    slot.free(failed);
  }
}

/** Records an outcome, retried; if it will not commit, a bare failed attempt instead. */
async function recordWithFallback(
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  outcome: AttemptOutcome,
  { onError, record }: SendingContext,
): Promise<void> {
  const random = (options.random ?? Math.random)();
  const recorded = async (o: AttemptOutcome) => {
    // What the committed outcome did to the delivery, counted once the transaction has committed.
    let effect: WebhookDeliveryOutcome | undefined;
    const committed = await retried(async () => {
      effect = await record({ delivery, outcome: o, random });
    }, onError);
    if (committed && effect) deps.metrics?.observeWebhookDelivery(effect);
    return committed;
  };
  if (await recorded(outcome)) return;
  // The full outcome would not commit (whatever the reason): record just a failed attempt, which touches
  // nothing but the attempt and the delivery. If even that fails, the lease runs out and the claim is retried.
  const what =
    outcome.result.kind === 'response'
      ? `the answer (HTTP ${outcome.result.statusCode})`
      : `the failure (${outcome.result.errorClass})`;
  await recorded(
    mkobaFailure(
      'outcome_unrecordable',
      `${what} could not be recorded; counted as a failed attempt`,
      outcome.startedAt,
      outcome.finishedAt,
    ),
  );
}

/** Runs fn, again after each delay while it throws; true once it succeeds. Errors go to onError. */
async function retried(fn: () => Promise<unknown>, onError: (error: unknown) => void): Promise<boolean> {
  for (let i = 0; ; i++) {
    try {
      await fn();
      return true;
    } catch (error) {
      onError(error);
    }
    const delay = OUTCOME_RECORD_RETRY_DELAYS_MS[i];
    if (delay === undefined) return false;
    await sleep(delay);
  }
}

/** Sends a claimed delivery, or says why not; undefined when there is nothing to record. */
async function attempt(
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  send: { slot: SendSlot; secretsOf: (current: DeliveryToSend) => string[] },
  startedAt: Date,
): Promise<AttemptOutcome | undefined> {
  const current = await send.slot.current();
  // Another dispatcher took it over already: the attempt is theirs.
  if (current?.status !== 'delivering' || current.attempts !== delivery.attempts) return undefined;
  // Disabled or deleted since the claim: not sent, and the claim does not count as an attempt.
  if (!current.subscriptionLive) {
    await releaseDelivery(deps.store, delivery.id, delivery.attempts);
    return undefined;
  }
  // Each claim counts an attempt, recorded or not; past the schedule's end no further one is made.
  if (current.attempts - current.attemptsBeforeRequeue > options.settings.retryScheduleSeconds.length + 1) {
    return mkobaFailure(
      'schedule_spent',
      'not sent: attempts whose outcome was never recorded (their dispatcher stopped) spent the retry schedule',
      startedAt,
      deps.now(),
    );
  }
  const target = {
    ...delivery,
    url: current.url,
    payloadFormat: current.payloadFormat,
    apiVersion: current.apiVersion,
  };
  const body = deliveryBody(target, deps);
  const secrets = send.secretsOf(current);
  const result: SendResult =
    secrets.length === 0
      ? { kind: 'error', errorClass: 'other', message: 'the subscription has no active secret' }
      : await options.sender(target.url, body, {
          'content-type': 'application/json',
          'user-agent': 'Mkoba-Webhooks/1',
          [WEBHOOK_EVENT_ID_HEADER.toLowerCase()]: delivery.eventId,
          [WEBHOOK_SIGNATURE_HEADER.toLowerCase()]: signatureHeader(body, secrets, unixSeconds(startedAt)),
        });
  return { startedAt, finishedAt: deps.now(), result, fromEndpoint: true };
}
