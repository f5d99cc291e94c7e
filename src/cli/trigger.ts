/**
 * `mkoba trigger <event-type>`: asks a running sandbox server to emit a test event of that type
 * (`POST /v1/sandbox/events`). It is recorded and delivered like any other event: to every subscription
 * that wants the type, and to `mkoba listen`. Prints the event id on stdout.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, type ApiTarget, apiRequest, checkEventType } from './apiClient.ts';
import { UsageError } from './usageError.ts';

export interface TriggerIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

export async function trigger(target: ApiTarget, type: string | undefined, io: TriggerIo): Promise<number> {
  if (type === undefined || type === '') {
    throw new UsageError('trigger needs an event type, e.g. mkoba trigger transfer.settled');
  }
  const eventType = checkEventType(type, 'mkoba trigger');
  let answer: Awaited<ReturnType<typeof apiRequest>>;
  try {
    answer = await apiRequest(target, 'POST', '/sandbox/events', {
      body: { type: eventType },
      // One key per run: a proxy that repeats the request cannot emit the event twice.
      headers: { 'idempotency-key': `mkoba-trigger-${randomUUID()}` },
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new Error(
        `${target.base}/sandbox/events was not found: mkoba trigger works against a sandbox server only (${error.message})`,
      );
    }
    throw error;
  }
  const event = answer.body as { id?: unknown; type?: unknown };
  if (typeof event.id !== 'string') throw new Error('the server answered without an event id');
  io.err(
    `emitted ${String(event.type)} ${event.id}; its deliveries: GET ${target.base}/events/${event.id}/deliveries`,
  );
  io.out(event.id);
  return 0;
}
