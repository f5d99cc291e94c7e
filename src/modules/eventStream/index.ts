/** The event stream: the outbox's events published to NATS JetStream, in commit order per organization. */
export {
  EVENT_STREAM_BATCH_EVENTS,
  EVENT_STREAM_DUPLICATE_WINDOW_MS,
  EVENT_STREAM_LEASE_MS,
  EVENT_STREAM_POLL_INTERVAL_MS,
  eventSubject,
} from './domain.ts';
export { type PassResult, publishPendingEvents, streamMessageBody } from './useCases.ts';
export { type EventStreamLog, type EventStreamWorker, startEventStreamPublisher } from './workers.ts';
