/**
 * NATS for the event stream's tests: the server under test (TEST_NATS_URL, or the machine's on 127.0.0.1:4222
 * when one answers there), nats-server processes a test starts and stops itself on a free port with a store
 * directory of its own, a unique stream and subject prefix per test, and reading back what a stream holds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { EventStreamSettings } from '../../src/config/eventStream.ts';

export const NATS_SERVER_BIN = '/usr/sbin/nats-server';
const MACHINE_NATS = { host: '127.0.0.1', port: 4222 };
const PROBE_TIMEOUT_MS = 500;
const SERVER_READY_WAIT_MS = 10_000;
const POLL_INTERVAL_MS = 50;

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The NATS the tests publish to; undefined (the tests skip) only when none is set and none answers. */
export const TEST_NATS_URL: string | undefined =
  process.env.TEST_NATS_URL ??
  ((await answers(MACHINE_NATS.host, MACHINE_NATS.port))
    ? `nats://${MACHINE_NATS.host}:${MACHINE_NATS.port}`
    : undefined);

/** Settings for a stream and subject prefix no other test uses. */
export function uniqueStreamSettings(url: string): EventStreamSettings {
  const tag = randomBytes(5).toString('hex');
  const parsed = new URL(url);
  return {
    servers: [{ hostPort: `${parsed.hostname}:${parsed.port || '4222'}`, tls: false }],
    user: undefined,
    pass: undefined,
    stream: `MKOBA_TEST_${tag}`,
    subjectPrefix: `mkobatest${tag}`,
  };
}

export interface StoredMessage {
  seq: number;
  subject: string;
  messageId: string | undefined;
  /** When the stream stored it (ms since the epoch). */
  storedAt: number;
  body: { id: string; type: string; [key: string]: unknown };
}

/** Every message the stream holds, in stream order; [] while the stream does not exist. */
export async function readStream(url: string, stream: string): Promise<StoredMessage[]> {
  const connection = await connect({ servers: new URL(url).host });
  try {
    const manager = await jetstreamManager(connection);
    const info = await manager.streams.info(stream).catch(() => undefined);
    if (!info) return [];
    const messages: StoredMessage[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const stored = await manager.streams.getMessage(stream, { seq });
      if (!stored) continue;
      messages.push({
        seq,
        subject: stored.subject,
        messageId: stored.header?.get('Nats-Msg-Id'),
        storedAt: stored.time.getTime(),
        body: stored.json(),
      });
    }
    return messages;
  } finally {
    await connection.close();
  }
}

export async function deleteStream(url: string, stream: string): Promise<void> {
  const connection = await connect({ servers: new URL(url).host });
  try {
    const manager = await jetstreamManager(connection);
    await manager.streams.delete(stream).catch(() => false);
  } finally {
    await connection.close();
  }
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A nats-server with JetStream of the test's own: on `port`, keeping its streams in `storeDir` across restarts. */
export class OwnNatsServer {
  private child: ChildProcess | undefined;
  readonly storeDir = mkdtempSync(path.join(tmpdir(), 'mkoba-nats-'));

  constructor(readonly port: number) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  static available(): boolean {
    return existsSync(NATS_SERVER_BIN);
  }

  async start(): Promise<void> {
    this.child = spawn(
      NATS_SERVER_BIN,
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + SERVER_READY_WAIT_MS;
    while (!(await answers('127.0.0.1', this.port))) {
      if (Date.now() > deadline) throw new Error(`nats-server on ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
