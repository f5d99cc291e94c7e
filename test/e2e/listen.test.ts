/**
 * `mkoba listen` and `mkoba trigger` as an integrator uses them: a real `mkoba serve` on a fresh embedded
 * data directory, a local receiver, `mkoba listen --forward-to <receiver>` and `mkoba trigger <type>` as
 * separate processes. What reaches the receiver must verify against the secret listen printed.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTEN_FORWARD_RETRY_DELAYS_MS, LISTEN_POLL_INTERVAL_MS } from '../../src/cli/listen.ts';
import { EVENT_TYPES } from '../../src/domain/events.ts';
import { verifySignatureHeader } from '../../src/domain/signing.ts';
import { type Received, type Receiver, startReceiver } from '../support/receiver.ts';
import {
  type Banner,
  http,
  killAllMkobaProcesses,
  type MkobaProcess,
  MkobaProcesses,
  mkobaEnv,
  READINESS_LAST_RESORT_MS,
  temporaryDataDir,
  waitForBanner,
  waitUntil,
} from './mkobaProcess.ts';

const EXIT_CODE_USAGE = 2;
/** Time for a forward (and its retries) to show up: a few polls plus every retry delay. */
const FORWARD_WAIT_MS =
  10 * LISTEN_POLL_INTERVAL_MS + LISTEN_FORWARD_RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0) + 20_000;
const SECRET_PATTERN = /^Webhook signing secret: (whsec_[0-9A-Za-z]{43})$/m;
const READY_PATTERN = /^mkoba listen: forwarding .* Ctrl-C to stop$/m;
const TEST_TIMEOUT_MS = 2 * FORWARD_WAIT_MS;

afterAll(killAllMkobaProcesses);

function verified(signed: Received, secret: string) {
  return verifySignatureHeader(
    signed.body,
    signed.headers['service-signature'] as string | undefined,
    [secret],
    Math.floor(Date.now() / 1000),
  );
}

/** A port on 127.0.0.1 that nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function idsOf(received: readonly Received[]): string[] {
  return received.map((r) => JSON.parse(r.body).id as string);
}

describe('mkoba listen and mkoba trigger against a running sandbox server', () => {
  const mkoba = new MkobaProcesses();
  const data = temporaryDataDir();
  let banner: Banner;
  let env: NodeJS.ProcessEnv;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    const server = await mkoba.start(['serve'], mkobaEnv({ MKOBA_DATA_DIR: data.dir, PORT: '0' }));
    banner = await waitForBanner(server);
    // Only the key and the address: listen and trigger need nothing else of the server's configuration.
    env = mkobaEnv({ MKOBA_API_KEY: banner.sandboxApiKey, MKOBA_API_BASE: banner.baseUrl });
  }, 2 * READINESS_LAST_RESORT_MS);
  afterAll(async () => {
    await mkoba.killAll();
    await Promise.all(receivers.map((r) => r.close()));
    data.remove();
  });

  async function receiver(): Promise<Receiver> {
    const started = await startReceiver('/webhooks/mkoba');
    receivers.push(started);
    return started;
  }

  /** Starts `mkoba listen` and waits for the secret it prints once it is ready. */
  async function startListen(args: string[]): Promise<{ listen: MkobaProcess; secret: string }> {
    const listen = await mkoba.start(['listen', ...args], env);
    // Two pipes: the secret (stdout) and the ready line (stderr) may arrive in either order.
    const ready = () => SECRET_PATTERN.test(listen.stdout()) && READY_PATTERN.test(listen.stderr());
    await waitUntil(
      () => ready() || listen.child.exitCode !== null,
      READINESS_LAST_RESORT_MS,
      'mkoba listen to print its secret',
    );
    const secret = listen.stdout().match(SECRET_PATTERN)?.[1];
    if (!secret || !ready()) {
      throw new Error(`not ready; stdout:\n${listen.stdout()}\nstderr:\n${listen.stderr()}`);
    }
    return { listen, secret };
  }

  async function triggered(type: string): Promise<string> {
    const result = await mkoba.run(['trigger', type], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^evt_[0-9a-z]{26}\n$/);
    expect(result.stderr).toContain(`emitted ${type} `);
    return result.stdout.trim();
  }

  it('forwards a triggered event, signed with the secret it printed, and nothing from before it started', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const before = await triggered('transfer.created');
    const local = await receiver();
    const { listen, secret } = await startListen(['--forward-to', local.url]);

    const id = await triggered('transfer.settled');
    await waitUntil(
      () => local.received.length >= 1 && listen.stdout().includes(`${id}  -> 200`),
      FORWARD_WAIT_MS,
      'the forward',
    );
    expect(idsOf(local.received)).toEqual([id]);
    const [forwarded] = local.received as [Received];
    expect(forwarded.headers['content-type']).toBe('application/json');
    expect(forwarded.headers['service-event-id']).toBe(id);
    expect(verified(forwarded, secret)).toMatchObject({ ok: true });
    const otherSecret = secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(verified(forwarded, otherSecret)).toEqual({ ok: false, reason: 'no_matching_signature' });
    // The envelope exactly as the API has it.
    const stored = await http('GET', `${banner.baseUrl}/events/${id}`, banner.sandboxApiKey);
    expect(JSON.parse(forwarded.body)).toEqual(stored.body);
    expect(stored.body).toMatchObject({
      type: 'transfer.settled',
      object: 'event',
      environment: 'sandbox',
      data: { status: 'settled' },
    });
    expect(listen.stdout()).toMatch(new RegExp(`transfer\\.settled {2}${id} {2}-> 200 \\(\\d+ ms\\)$`, 'm'));

    // A few more polls: the event from before listen started never comes, nor does the same one twice.
    const polls = 3;
    await new Promise((resolve) => setTimeout(resolve, polls * LISTEN_POLL_INTERVAL_MS));
    expect(idsOf(local.received)).not.toContain(before);
    expect(local.received).toHaveLength(1);

    expect(await listen.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(listen.stderr()).toMatch(/mkoba listen: stopped/);
  });

  it('--events forwards only the types named', { timeout: TEST_TIMEOUT_MS }, async () => {
    const local = await receiver();
    const { listen } = await startListen(['--forward-to', local.url, '--events', 'transfer.failed']);
    const settled = await triggered('transfer.settled');
    const failed = await triggered('transfer.failed');
    await waitUntil(() => local.received.length >= 1, FORWARD_WAIT_MS, 'the forward');
    // Forwards go in creation order, so the earlier event would have come first had it passed the filter.
    expect(idsOf(local.received)).toEqual([failed]);
    expect(listen.stdout()).not.toContain(settled);
    expect(await listen.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('--payload-format camel_case and --api-version forward what such a subscription receives', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const local = await receiver();
    const { listen } = await startListen([
      '--forward-to',
      local.url,
      '--payload-format',
      'camel_case',
      '--api-version',
      '2026-11-28',
    ]);
    const settled = await triggered('transfer.settled');
    await waitUntil(() => local.received.length >= 1, FORWARD_WAIT_MS, 'the forward');
    const event = JSON.parse(local.received[0]?.body ?? '{}');
    expect(event).toMatchObject({ id: settled, apiVersion: '2026-11-28', product: 'mkoba' });
    expect(event.createdAt).toEqual(expect.any(String));
    expect(event.data.transferId).toEqual(expect.any(String));
    expect(await listen.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('retries a failed forward with backoff, a bounded number of times, signing each attempt afresh', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const local = await receiver();
    const { listen, secret } = await startListen(['--forward-to', local.url]);
    // By type, not id: listen may forward an event before its trigger command has even exited.
    local.respond = (request) => {
      const { id, type } = JSON.parse(request.body);
      const seen = local.received.filter((r) => JSON.parse(r.body).id === id).length;
      if (type === 'transfer.settled') return { status: seen === 1 ? 503 : 200 };
      if (type === 'transfer.failed') return { status: 500 };
      return { status: 200 };
    };
    const flaky = await triggered('transfer.settled');
    const broken = await triggered('transfer.failed');
    const attemptsMax = LISTEN_FORWARD_RETRY_DELAYS_MS.length + 1;
    await waitUntil(
      () => listen.stdout().includes(`gave up after ${attemptsMax} attempts`),
      FORWARD_WAIT_MS,
      'listen to give up on the broken forward',
    );
    const lines = listen.stdout().split('\n');
    expect(lines.filter((l) => l.includes(flaky)).map((l) => l.replace(/^.*-> /, ''))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^503 \\(\\d+ ms\\); retry 1 of ${attemptsMax - 1} in ${LISTEN_FORWARD_RETRY_DELAYS_MS[0]} ms$`,
        ),
      ),
      expect.stringMatching(/^200 \(\d+ ms\)$/),
    ]);
    const brokenLines = lines.filter((l) => l.includes(broken));
    expect(brokenLines).toHaveLength(attemptsMax);
    expect(brokenLines.at(-1)).toMatch(
      new RegExp(`-> 500 \\(\\d+ ms\\); gave up after ${attemptsMax} attempts$`),
    );

    expect(idsOf(local.received)).toEqual([flaky, flaky, ...Array(attemptsMax).fill(broken)]);
    for (const request of local.received) expect(verified(request, secret)).toMatchObject({ ok: true });
    // The same event each time: the same bytes, and the same id in the header.
    const flakyBodies = local.received
      .filter((r) => r.headers['service-event-id'] === flaky)
      .map((r) => r.body);
    expect(new Set(flakyBodies).size).toBe(1);
    expect(await listen.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('exits 1 naming the problem when the server refuses the key', async () => {
    const refused = { ...env, MKOBA_API_KEY: 'sk_sandbox_unknownunknownunknown0' };
    const listen = await mkoba.run(['listen', '--forward-to', 'http://127.0.0.1:9/x'], refused);
    expect(listen.code).toBe(1);
    expect(listen.stderr).toMatch(/^mkoba: the server answered 401 invalid_api_key: /);
    expect(listen.stdout).toBe('');
    const trigger = await mkoba.run(['trigger', 'transfer.settled'], refused);
    expect(trigger.code).toBe(1);
    expect(trigger.stderr).toMatch(/^mkoba: the server answered 401 invalid_api_key: /);
    expect(trigger.stdout).toBe('');
  });
});

describe.concurrent('mkoba listen and trigger refuse what they cannot act on', () => {
  const mkoba = new MkobaProcesses();
  afterAll(() => mkoba.killAll());
  const key = 'sk_sandbox_0123456789abcdefghij';
  // Nothing listens on port 9 (discard): no case may get as far as a request.
  const env = mkobaEnv({ MKOBA_API_KEY: key, MKOBA_API_BASE: 'http://127.0.0.1:9/v1' });

  it.for([
    [
      ['trigger', 'transfer.exploded'],
      /unknown event type 'transfer\.exploded' in mkoba trigger; known types: /,
    ],
    [['trigger'], /trigger needs an event type/],
    [
      ['listen', '--forward-to', 'http://127.0.0.1:9/x', '--events', 'transfer.settled,nope'],
      /unknown event type 'nope' in --events; known types: /,
    ],
    [['listen'], /listen needs --forward-to URL/],
    [['listen', '--forward-to', 'ftp://127.0.0.1/x'], /--forward-to must be an http\(s\) URL/],
    [['listen', '--forward-to', 'http://127.0.0.1:9/x', '--secret', 'nope'], /--secret must be a whsec_/],
    [
      ['listen', '--forward-to', 'http://127.0.0.1:9/x', '--payload-format', 'kebab'],
      /--payload-format is one of snake_case, camel_case/,
    ],
    [
      ['listen', '--forward-to', 'http://127.0.0.1:9/x', '--api-version', '2020-01-01'],
      /--api-version is one of /,
    ],
    [
      ['trigger', 'transfer.settled', '--api-key', 'pk_nope'],
      /the API key is malformed: An API key starts with sk_sandbox_/,
    ],
  ] as const)('%o exits 2 with a clear line', async ([args, message], { expect }) => {
    const result = await mkoba.run([...args], env);
    expect(result.code).toBe(EXIT_CODE_USAGE);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/Run 'mkoba help' for usage/);
  });

  it('an unknown type names every known one', async ({ expect }) => {
    const result = await mkoba.run(['trigger', 'transfer.exploded'], env);
    for (const type of EVENT_TYPES) expect(result.stderr).toContain(type);
  });

  it('no key at all says where to get one', async ({ expect }) => {
    const result = await mkoba.run(['trigger', 'transfer.settled'], mkobaEnv({}));
    expect(result.code).toBe(EXIT_CODE_USAGE);
    expect(result.stderr).toMatch(/needs an API key: --api-key sk_sandbox_… or MKOBA_API_KEY/);
  });

  it('a server that is not there is one line naming the address', async ({ expect }) => {
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}/v1`;
    for (const args of [
      ['trigger', 'transfer.settled'],
      ['listen', '--forward-to', 'http://127.0.0.1:9/x'],
    ]) {
      const result = await mkoba.run(args, { ...env, MKOBA_API_BASE: base });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `mkoba: cannot reach ${base} (ECONNREFUSED); is mkoba serve running there? (--api-base)\n`,
      );
    }
  });

  it('mkoba help documents worker, listen and trigger and the webhook settings', async ({ expect }) => {
    const result = await mkoba.run(['help'], mkobaEnv({}));
    expect(result.code).toBe(0);
    for (const text of [
      'mkoba worker',
      'mkoba listen --forward-to URL',
      'mkoba trigger EVENT_TYPE',
      'MKOBA_API_KEY',
      'MKOBA_API_BASE',
      'MKOBA_WEBHOOK_RETRY_SCHEDULE',
      'MKOBA_WEBHOOK_TIMEOUT_MS',
      'MKOBA_WEBHOOK_DISABLE_AFTER_SECONDS',
    ]) {
      expect(result.stdout).toContain(text);
    }
  });
});
