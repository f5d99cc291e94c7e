/**
 * The event stream's publisher: a loop that connects to NATS, makes sure the stream exists, and runs a
 * publishing pass every EVENT_STREAM_POLL_INTERVAL_MS; after a failure (the broker down, a publish not
 * acknowledged in time) it waits, doubling from EVENT_STREAM_BACKOFF_MS_MIN to EVENT_STREAM_BACKOFF_MS_MAX,
 * and starts again from the cursors, so nothing is lost and nothing is published out of order. The NATS
 * client is imported when the publisher first connects, so a process without an event stream never loads it.
 */
import { hostname } from 'node:os';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Deps } from '../../app/deps.ts';
import type { EventStreamSettings } from '../../config/eventStream.ts';
import {
  EVENT_STREAM_CONNECT_TIMEOUT_MS,
  EVENT_STREAM_DUPLICATE_WINDOW_MS,
  EVENT_STREAM_DUPLICATE_WINDOW_MS_MIN,
  EVENT_STREAM_POLL_INTERVAL_MS,
  EVENT_STREAM_PUBLISH_TIMEOUT_MS,
  nextBackoffMs,
  streamSubjects,
} from './domain.ts';
import { type EventPublisher, type PassResult, publishPendingEvents } from './useCases.ts';

/** JetStream's API error code for a stream that does not exist. */
const STREAM_NOT_FOUND_CODE = 10059;

export interface EventStreamWorker {
  stop(): Promise<void>;
}

export interface EventStreamLog {
  /** A pass or a connection failed; the loop waits `retryInMs` and tries again. */
  failed(error: unknown, retryInMs: number): void;
  /** Something the operator should know once (a stream created, a short duplicate window). */
  notice(message: string): void;
}

/** Creates the stream if it is absent; reports an existing one whose duplicate window is shorter than needed. */
async function ensureStream(
  connection: NatsConnection,
  settings: EventStreamSettings,
  log: EventStreamLog,
): Promise<void> {
  const [{ jetstreamManager }, { nanos }] = await Promise.all([
    import('@nats-io/jetstream'),
    import('@nats-io/transport-node'),
  ]);
  const manager = await jetstreamManager(connection, { timeout: EVENT_STREAM_PUBLISH_TIMEOUT_MS });
  try {
    const info = await manager.streams.info(settings.stream);
    const windowMs = Number(info.config.duplicate_window) / 1e6;
    if (windowMs < EVENT_STREAM_DUPLICATE_WINDOW_MS_MIN) {
      log.notice(
        `stream ${settings.stream}'s duplicate window is ${windowMs} ms; a republished event older than that is stored twice (at least ${EVENT_STREAM_DUPLICATE_WINDOW_MS_MIN} ms is advised)`,
      );
    }
  } catch (error) {
    if ((error as { code?: unknown }).code !== STREAM_NOT_FOUND_CODE) throw error;
    await manager.streams.add({
      name: settings.stream,
      subjects: streamSubjects(settings.subjectPrefix),
      duplicate_window: nanos(EVENT_STREAM_DUPLICATE_WINDOW_MS),
    });
    log.notice(`created stream ${settings.stream} on ${streamSubjects(settings.subjectPrefix).join(', ')}`);
  }
}

function jetStreamPublisher(client: JetStreamClient): EventPublisher {
  return {
    async publish(subject, body, messageId) {
      const ack = await client.publish(subject, body, {
        msgID: messageId,
        timeout: EVENT_STREAM_PUBLISH_TIMEOUT_MS,
      });
      return { duplicate: ack.duplicate };
    },
  };
}

/** The connection, opened on first need and kept: the client reconnects by itself after a broker restart. */
class StreamConnection {
  private connection: NatsConnection | undefined;
  private publisher: EventPublisher | undefined;

  constructor(
    private readonly settings: EventStreamSettings,
    private readonly log: EventStreamLog,
  ) {}

  /** The publisher, connecting and checking the stream first when that has not succeeded yet. */
  async ready(): Promise<EventPublisher> {
    if (this.publisher) return this.publisher;
    const [{ jetstream }, { connect }] = await Promise.all([
      import('@nats-io/jetstream'),
      import('@nats-io/transport-node'),
    ]);
    this.connection ??= await connect({
      servers: this.settings.servers.map((s) => s.hostPort),
      ...(this.settings.servers.some((s) => s.tls) ? { tls: {} } : {}),
      ...(this.settings.user !== undefined ? { user: this.settings.user, pass: this.settings.pass } : {}),
      name: `mkoba ${hostname()} ${process.pid}`,
      timeout: EVENT_STREAM_CONNECT_TIMEOUT_MS,
      maxReconnectAttempts: -1,
    });
    await ensureStream(this.connection, this.settings, this.log);
    this.publisher = jetStreamPublisher(
      jetstream(this.connection, { timeout: EVENT_STREAM_PUBLISH_TIMEOUT_MS }),
    );
    return this.publisher;
  }

  /** After a failure the stream is checked again (a broker that lost its store has no stream). */
  failed(): void {
    this.publisher = undefined;
  }

  async close(): Promise<void> {
    await this.connection?.close().catch(() => {});
    this.connection = undefined;
  }
}

/** Starts the publisher loop; its `stop` waits for the pass in flight and closes the connection. */
export function startEventStreamPublisher(
  deps: Deps,
  settings: EventStreamSettings,
  log: EventStreamLog,
  onPass: (result: PassResult) => void = () => {},
): EventStreamWorker {
  const owner = `${hostname()}:${process.pid}:${deps.newId('event').slice(-8)}`;
  let stopped = false;
  const target = {
    stream: settings.stream,
    subjectPrefix: settings.subjectPrefix,
    owner,
    stopping: () => stopped,
  };
  const connection = new StreamConnection(settings, log);
  let backoffMs: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = undefined;
      });
    }, delayMs);
    timer.unref();
  };
  const pass = async () => {
    try {
      const result = await publishPendingEvents(deps, target, await connection.ready());
      backoffMs = undefined;
      onPass(result);
      // A full pass leaves work behind: go on at once rather than after the interval.
      schedule(result.organizations > 0 ? 0 : EVENT_STREAM_POLL_INTERVAL_MS);
    } catch (error) {
      connection.failed();
      backoffMs = nextBackoffMs(backoffMs);
      log.failed(error, backoffMs);
      schedule(backoffMs);
    }
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await connection.close();
    },
  };
}
