/**
 * Sending what a claim took: where each delivery stands now, read once for the claim, then each attempt on
 * its own, signed afresh, its outcome handed to the recorder and retried there until it commits.
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
import { type DeliveryToSend, findDeliveriesToSend, releaseDelivery } from '../repository/deliveries.ts';
import { openStoredSecret } from '../repository/secrets.ts';
import {
  type AttemptOutcome,
  type DispatcherOptions,
  mkobaFailure,
  type OutcomeRecorder,
} from './attempts.ts';
import type { SendResult } from './httpSender.ts';

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

/** Wait before reading a claim's deliveries again when the first read failed. */
const PRE_SEND_READ_RETRY_DELAY_MS = 100;

/** Waits before trying again to record an outcome (a dropped connection, a database failing over). */
const OUTCOME_RECORD_RETRY_DELAYS_MS: readonly number[] = [100, 1_000];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends what one claim took: one read of where they all stand now (after the claim committed), then each
 * attempt on its own. Resolves once every outcome is recorded.
 */
export function sendClaimed(
  deps: Deps,
  options: DispatcherOptions,
  claimed: readonly ClaimedDelivery[],
  onError: (error: unknown) => void,
  record: OutcomeRecorder,
  handBack?: AbortSignal,
): Promise<void>[] {
  if (claimed.length === 0) return [];
  const ids = claimed.map((d) => d.id);
  // Tried twice: a read that fails would count a failed attempt against every delivery of the claim.
  const current = findDeliveriesToSend(deps.store, ids).catch(async (error: unknown) => {
    onError(error);
    await sleep(PRE_SEND_READ_RETRY_DELAY_MS);
    return findDeliveriesToSend(deps.store, ids);
  });
  // Each attempt turns a failed read into its own failed attempt; this only stops Node calling it unhandled.
  current.catch(() => {});
  return claimed.map((delivery) => sendOne(deps, options, delivery, current, { onError, record, handBack }));
}

/**
 * One attempt, from the claim to its recorded outcome. Never throws: whatever fails in between (the event
 * cannot be rendered, signing, the sender itself) is a failed attempt with `error_class: internal`, and an
 * outcome that cannot be recorded is retried, then recorded bare; so the retry schedule and exhaustion
 * apply to every delivery, and the lease running out is only the way out of a dispatcher that died.
 */
async function sendOne(
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  current: Promise<Map<string, DeliveryToSend>>,
  on: { onError: (error: unknown) => void; record: OutcomeRecorder; handBack: AbortSignal | undefined },
): Promise<void> {
  const { onError, record } = on;
  const startedAt = deps.now();
  let outcome: AttemptOutcome | undefined;
  try {
    const attempted = attempt(deps, options, delivery, current, startedAt);
    const settled = await unlessHandedBack(attempted, on.handBack);
    if (settled === 'handed_back') {
      // The dispatcher is stopping: the claim (and its attempt) is undone; another dispatcher sends it now.
      await retried(() => releaseDelivery(deps.store, delivery.id, delivery.attempts), onError);
      return;
    }
    outcome = settled;
  } catch (error) {
    onError(error);
    outcome = mkobaFailure('internal', 'Mkoba could not prepare or send this attempt', startedAt, deps.now());
  }
  if (!outcome) return;
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
  currentOfClaim: Promise<Map<string, DeliveryToSend>>,
  startedAt: Date,
): Promise<AttemptOutcome | undefined> {
  const current = (await currentOfClaim).get(delivery.id);
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
  // Newest first: should more secrets be live than a header carries, the newest sign.
  const secrets = delivery.secrets
    .map((secret) => openStoredSecret(deps.keyring, secret))
    .filter((secret) => secret.length > 0)
    .slice(0, WEBHOOK_SIGNING_SECRETS_MAX);
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
