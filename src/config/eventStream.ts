/**
 * MKOBA_EVENT_STREAM_URL, MKOBA_EVENT_STREAM_NAME and MKOBA_EVENT_STREAM_SUBJECT_PREFIX: where the outbox's
 * events are published (NATS JetStream, docs/EVENT-STREAM.md). Unset URL: no stream. Checked at start-up, so
 * a wrong value stops the process with one line naming the variable instead of failing at every pass.
 */
import { ConfigError, nonEmpty } from './variables.ts';

export const EVENT_STREAM_NAME_DEFAULT = 'MKOBA_EVENTS';
export const EVENT_STREAM_SUBJECT_PREFIX_DEFAULT = 'mkoba';
/** Servers one MKOBA_EVENT_STREAM_URL may list (comma-separated), for a cluster's seed list. */
export const EVENT_STREAM_SERVERS_MAX = 16;
const STREAM_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const SUBJECT_TOKEN_PATTERN = /^[A-Za-z0-9_-]+$/;
const SERVER_PROTOCOLS = new Set(['nats:', 'tls:']);

export interface EventStreamServer {
  /** host:port, as the client is given it (credentials apart). */
  hostPort: string;
  tls: boolean;
}

export interface EventStreamSettings {
  servers: EventStreamServer[];
  /** From the first URL's user info, if any: never logged. */
  user: string | undefined;
  pass: string | undefined;
  /** The JetStream stream the events go to; created if absent. */
  stream: string;
  /** Subjects are `<prefix>.<organization id>.<event type>`. */
  subjectPrefix: string;
}

function parseServer(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.includes('://') ? text : `nats://${text}`);
  } catch {
    throw new ConfigError(
      'MKOBA_EVENT_STREAM_URL',
      'must be nats://host:port (or tls://host:port), several separated by commas',
    );
  }
  if (
    !SERVER_PROTOCOLS.has(url.protocol) ||
    url.hostname === '' ||
    (url.pathname !== '' && url.pathname !== '/')
  ) {
    throw new ConfigError(
      'MKOBA_EVENT_STREAM_URL',
      `must be nats://host:port (or tls://host:port), got a ${url.protocol.replace(':', '')} URL`,
    );
  }
  return url;
}

export function loadEventStreamSettings(env: NodeJS.ProcessEnv): EventStreamSettings | undefined {
  const text = nonEmpty(env.MKOBA_EVENT_STREAM_URL);
  if (text === undefined) return undefined;
  const urls = text.split(',').map((part) => parseServer(part.trim()));
  if (urls.length > EVENT_STREAM_SERVERS_MAX) {
    throw new ConfigError('MKOBA_EVENT_STREAM_URL', `lists more than ${EVENT_STREAM_SERVERS_MAX} servers`);
  }
  const stream = nonEmpty(env.MKOBA_EVENT_STREAM_NAME) ?? EVENT_STREAM_NAME_DEFAULT;
  if (!STREAM_NAME_PATTERN.test(stream)) {
    throw new ConfigError(
      'MKOBA_EVENT_STREAM_NAME',
      `must be 1 to 64 of A-Z, a-z, 0-9, '_' or '-', got '${stream}'`,
    );
  }
  const subjectPrefix =
    nonEmpty(env.MKOBA_EVENT_STREAM_SUBJECT_PREFIX) ?? EVENT_STREAM_SUBJECT_PREFIX_DEFAULT;
  if (!subjectPrefix.split('.').every((token) => SUBJECT_TOKEN_PATTERN.test(token))) {
    throw new ConfigError(
      'MKOBA_EVENT_STREAM_SUBJECT_PREFIX',
      `must be subject tokens of A-Z, a-z, 0-9, '_' or '-' separated by dots, got '${subjectPrefix}'`,
    );
  }
  const first = urls[0] as URL;
  return {
    servers: urls.map((url) => ({
      hostPort: `${url.hostname}:${url.port || '4222'}`,
      tls: url.protocol === 'tls:',
    })),
    user: first.username ? decodeURIComponent(first.username) : undefined,
    pass: first.password ? decodeURIComponent(first.password) : undefined,
    stream,
    subjectPrefix,
  };
}
