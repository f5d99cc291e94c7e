/**
 * One publishing pass: lease the organizations that have events past their cursor, publish each one's
 * events in commit order, one at a time (each acknowledged before the next is sent, so a failure never lets
 * a later event overtake an earlier one), and move its cursor after each acknowledged batch.
 */
import type { Deps } from '../../app/deps.ts';
import { renderEvent } from '../../domain/events.ts';
import { PAYLOAD_VERSION_LATEST } from '../../domain/payloadVersions.ts';
import {
  EVENT_STREAM_BATCH_EVENTS,
  EVENT_STREAM_LEASE_MARGIN_MS,
  EVENT_STREAM_LEASE_MS,
  EVENT_STREAM_ORGANIZATIONS_PER_PASS,
  eventSubject,
  type StreamCursor,
} from './domain.ts';
import {
  advanceCursor,
  type LeasedOrganization,
  leaseOrganizations,
  readEventsAfter,
  releaseLease,
} from './repository.ts';

/** Sends one message and resolves once the stream acknowledged it; `duplicate`: it had it already. */
export interface EventPublisher {
  publish(subject: string, body: string, messageId: string): Promise<{ duplicate: boolean }>;
}

export interface StreamTarget {
  stream: string;
  subjectPrefix: string;
  /** This process's name in leases: unique per running publisher. */
  owner: string;
  /** True once the process is stopping: the pass records what was acknowledged and gives its leases back. */
  stopping?: () => boolean;
}

export interface PassResult {
  organizations: number;
  published: number;
  duplicates: number;
}

/** The bytes an event is published as: the webhook envelope, snake_case, in the newest payload version. */
export function streamMessageBody(deps: Deps, event: Parameters<typeof renderEvent>[0]): string {
  return JSON.stringify(renderEvent(event, deps.environment, PAYLOAD_VERSION_LATEST, 'snake_case'));
}

/** One pass over every organization with events to publish (at most a pass's worth). Throws on a failed publish. */
export async function publishPendingEvents(
  deps: Deps,
  target: StreamTarget,
  publisher: EventPublisher,
): Promise<PassResult> {
  const now = deps.now();
  const leased = await leaseOrganizations(
    deps.store,
    target.stream,
    target.owner,
    now,
    new Date(now.getTime() + EVENT_STREAM_LEASE_MS),
    EVENT_STREAM_ORGANIZATIONS_PER_PASS,
  );
  const result: PassResult = { organizations: leased.length, published: 0, duplicates: 0 };
  let failure: unknown;
  for (const organization of leased) {
    try {
      if (failure === undefined && !target.stopping?.()) {
        await publishOrganization(deps, target, publisher, organization, result);
      }
    } catch (error) {
      failure = error;
    } finally {
      await releaseLease(deps.store, target.stream, organization.organizationId, target.owner);
    }
  }
  if (failure !== undefined) throw failure;
  return result;
}

/** An organization's events in batches, until none is left, the lease runs short, or a publish fails. */
async function publishOrganization(
  deps: Deps,
  target: StreamTarget,
  publisher: EventPublisher,
  { organizationId, cursor: start }: LeasedOrganization,
  result: PassResult,
): Promise<void> {
  let cursor: StreamCursor = start;
  let leaseEndsAt = deps.now().getTime() + EVENT_STREAM_LEASE_MS;
  for (;;) {
    const batch = await readEventsAfter(deps.store, organizationId, cursor, EVENT_STREAM_BATCH_EVENTS);
    if (batch.length === 0) return;
    let acknowledged = 0;
    let failure: unknown;
    for (const { event } of batch) {
      if (target.stopping?.()) break;
      if (deps.now().getTime() > leaseEndsAt - EVENT_STREAM_LEASE_MARGIN_MS) break;
      try {
        const ack = await publisher.publish(
          eventSubject(target.subjectPrefix, organizationId, event.type),
          streamMessageBody(deps, event),
          event.id,
        );
        if (ack.duplicate) result.duplicates += 1;
        else result.published += 1;
        deps.metrics?.observeEventStreamPublish(ack.duplicate ? 'duplicate' : 'stored');
        acknowledged += 1;
      } catch (error) {
        deps.metrics?.observeEventStreamPublish('failed');
        failure = error;
        break;
      }
    }
    const last = batch[acknowledged - 1];
    if (last) {
      const now = deps.now();
      const held = await advanceCursor(
        deps.store,
        target.stream,
        organizationId,
        target.owner,
        { transactionId: last.transactionId, eventId: last.event.id, published: acknowledged },
        now,
        new Date(now.getTime() + EVENT_STREAM_LEASE_MS),
      );
      if (!held) return;
      leaseEndsAt = now.getTime() + EVENT_STREAM_LEASE_MS;
      cursor = { transactionId: last.transactionId, eventId: last.event.id };
    }
    if (failure !== undefined) throw failure;
    if (acknowledged < batch.length) return;
  }
}
