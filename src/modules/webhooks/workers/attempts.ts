/**
 * What the dispatcher's steps share: its options, and what one attempt came to on its way from the send to
 * its recorded outcome.
 */
import type { WebhookSettings } from '../../../config/webhooks.ts';
import type { WebhookDeliveryOutcome } from '../../../metrics.ts';
import type { ClaimedDelivery } from '../repository/claims.ts';
import type { SendResult, WebhookSender } from './httpSender.ts';

export interface DispatcherOptions {
  settings: WebhookSettings;
  sender: WebhookSender;
  /** In [0, 1): drives retry jitter. */
  random?: () => number;
}

/** Why an attempt failed when the fault is Mkoba's, not the endpoint's (the `error_class` of the log). */
export type DispatchErrorClass = 'internal' | 'outcome_unrecordable' | 'schedule_spent';

/** What one attempt came to, ready to record. */
export interface AttemptOutcome {
  startedAt: Date;
  finishedAt: Date;
  result: SendResult | { kind: 'error'; errorClass: DispatchErrorClass; message: string };
  /** False when Mkoba is why it failed: the endpoint's failure window and auto-disable are left alone. */
  fromEndpoint: boolean;
}

/** The endpoint answered 2xx. */
export const isSuccess = (result: AttemptOutcome['result']) =>
  result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300;

/** A failed attempt whose fault is Mkoba's, not the endpoint's. */
export function mkobaFailure(
  errorClass: DispatchErrorClass,
  message: string,
  startedAt: Date,
  finishedAt: Date,
): AttemptOutcome {
  return { startedAt, finishedAt, result: { kind: 'error', errorClass, message }, fromEndpoint: false };
}

/** An attempt's outcome waiting to be recorded, with the draw that sets its retry jitter. */
export interface PendingOutcome {
  delivery: ClaimedDelivery;
  outcome: AttemptOutcome;
  random: number;
}

/** Records one outcome, alone or in one transaction with others that finished at the same time. */
export type OutcomeRecorder = (pending: PendingOutcome) => Promise<WebhookDeliveryOutcome | undefined>;
