/**
 * The event stream's rules: the subject an event is published on, the limits of a publishing pass, the
 * lease that keeps one process per organization, and the wait after a failure. docs/EVENT-STREAM.md.
 */

/** Events read, published and acknowledged before the organization's cursor is written: one read per batch. */
export const EVENT_STREAM_BATCH_EVENTS = 200;
/** Organizations one pass leases; the least recently published go first, so none starves. */
export const EVENT_STREAM_ORGANIZATIONS_PER_PASS = 50;
/** Between passes while nothing failed: how soon a committed event is published, at most. */
export const EVENT_STREAM_POLL_INTERVAL_MS = 200;
/** How long JetStream has to acknowledge one message before the pass stops and waits. */
export const EVENT_STREAM_PUBLISH_TIMEOUT_MS = 2_000;
/** How long a first connection may take before the pass counts as failed. */
export const EVENT_STREAM_CONNECT_TIMEOUT_MS = 2_000;
/**
 * A process's lease on an organization's publication, renewed with every cursor write. A process that died
 * holding one delays the organization's events by at most this long.
 */
export const EVENT_STREAM_LEASE_MS = 10_000;
/**
 * A publisher stops sending once less than this is left of its lease (one publish's time-out and a
 * second of slack), so it never sends after another process could have taken the organization over.
 */
export const EVENT_STREAM_LEASE_MARGIN_MS = EVENT_STREAM_PUBLISH_TIMEOUT_MS + 1_000;
/**
 * The de-duplication window of a stream Mkoba creates. A message is republished (same Nats-Msg-Id) only
 * after a publisher stopped between JetStream's acknowledgement and its cursor write: by itself at once,
 * or by another process once the lease has run out. Ten minutes covers both with room for a restart.
 */
export const EVENT_STREAM_DUPLICATE_WINDOW_MS = 10 * 60_000;
/** The shortest window in an existing stream that is not reported at start: the lease and a restart. */
export const EVENT_STREAM_DUPLICATE_WINDOW_MS_MIN = 2 * 60_000;
/** Waits after a failed pass: doubling from the first to the last, reset by a pass that succeeds. */
export const EVENT_STREAM_BACKOFF_MS_MIN = 500;
export const EVENT_STREAM_BACKOFF_MS_MAX = 30_000;

/** `<prefix>.<organization id>.<event type>`: event types' dots make further tokens (`transfer.settled`). */
export function eventSubject(prefix: string, organizationId: string, type: string): string {
  return `${prefix}.${organizationId}.${type}`;
}

/** The subjects a stream Mkoba creates takes: everything under the prefix. */
export function streamSubjects(prefix: string): string[] {
  return [`${prefix}.>`];
}

/** The wait after a failed pass, given the previous one (undefined after a success). */
export function nextBackoffMs(previousMs: number | undefined): number {
  if (previousMs === undefined) return EVENT_STREAM_BACKOFF_MS_MIN;
  return Math.min(EVENT_STREAM_BACKOFF_MS_MAX, previousMs * 2);
}

/** Where an organization's publication stands: the last event JetStream acknowledged, in commit order. */
export interface StreamCursor {
  /** The writing transaction's id (xid8, as text); undefined before the first event. */
  transactionId: string | undefined;
  eventId: string | undefined;
}
