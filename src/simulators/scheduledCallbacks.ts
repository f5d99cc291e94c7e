/**
 * Callbacks a simulator POSTs later (Daraja's results, Smile ID's job results): each is scheduled with its
 * timer, sent once (when due, or early when a test asks), and counted while its POST is in flight, so a test
 * can deliver everything now or wait for the deliveries under way.
 */

/** The controls a simulator that POSTs scheduled callbacks gives its tests. */
export interface ScheduledCallbackControls {
  /** The next `count` requests answer `status` with the partner's error body. */
  failNext(count: number, status: number): void;
  /** POSTs every scheduled callback now (late ones too) and waits for the deliveries to finish. */
  deliverPendingCallbacks(): Promise<void>;
  /** Waits for callbacks already being POSTed (not those scheduled for later). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** The callbacks a simulator has scheduled and is POSTing; `closed` once it stops. */
export interface CallbackQueue<C extends { timer: NodeJS.Timeout }> {
  closed: boolean;
  scheduled: Set<C>;
  inFlight: Set<Promise<void>>;
}

/** Schedules a callback `send` POSTs after `delayMs` (nothing once the simulator is closed). */
export function scheduleCallback<C extends { timer: NodeJS.Timeout }>(
  queue: CallbackQueue<C>,
  fields: Omit<C, 'timer'>,
  delayMs: number,
  send: (callback: C) => void,
): void {
  if (queue.closed) return;
  const callback = { ...fields, timer: setTimeout(() => send(callback), delayMs) } as C;
  callback.timer.unref();
  queue.scheduled.add(callback);
}

/** Counts a callback's POST as in flight until it settles. */
export function trackInFlight(queue: CallbackQueue<{ timer: NodeJS.Timeout }>, attempt: Promise<void>): void {
  queue.inFlight.add(attempt);
  void attempt.finally(() => queue.inFlight.delete(attempt));
}

/** Waits for callbacks already being POSTed (not those scheduled for later). */
export async function callbacksIdle(queue: CallbackQueue<{ timer: NodeJS.Timeout }>): Promise<void> {
  while (queue.inFlight.size > 0) await Promise.allSettled([...queue.inFlight]);
}

/** POSTs every scheduled callback now (those `only` accepts, when given) and waits for the deliveries. */
export async function deliverScheduledNow<C extends { timer: NodeJS.Timeout }>(
  queue: CallbackQueue<C>,
  send: (callback: C) => void,
  only?: (callback: C) => boolean,
): Promise<void> {
  for (const callback of [...queue.scheduled]) {
    if (only && !only(callback)) continue;
    clearTimeout(callback.timer);
    send(callback);
  }
  await callbacksIdle(queue);
}

/** The simulator is closing: nothing more is scheduled, and what was is not sent. */
export function cancelScheduled(queue: CallbackQueue<{ timer: NodeJS.Timeout }>): void {
  queue.closed = true;
  for (const callback of queue.scheduled) clearTimeout(callback.timer);
  queue.scheduled.clear();
}
