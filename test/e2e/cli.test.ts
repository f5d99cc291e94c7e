/**
 * `mkoba` as a person uses it: real processes (`node bin/mkoba.js`), a temporary MKOBA_DATA_DIR, PORT=0,
 * and real HTTP against the printed URL. Each top-level describe has its own data directory and runs
 * concurrently with the others (most of a process's life is waiting; how many embedded databases are
 * created at once is limited in mkobaProcess.ts); the steps inside one describe run in order
 * (`it.sequential`) and share its server. Every wait ends on what a process prints (or its exit); the
 * time-outs are last resorts. Every process a describe starts is killed in its afterAll.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema, dropSchema } from '../../src/store/postgres.ts';
import { rfc4180Records } from '../support/csv.ts';
import { TEST_DATABASE_URL } from '../support/harness.ts';
import {
  BANNER_READY_PATTERN,
  type Banner,
  E2E_TEST_TIMEOUT_MS,
  fileExists,
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

/** A second server facing a running one stops at once, well before DATA_DIR_LOCK_WAIT_MS. */
const FAIL_FAST_MS_MAX = 10_000;
const SEED_ORGANIZATION = 'Mkoba Sandbox';
/** As `mkoba --help` documents it. */
const EXIT_CODE_INVALID_CONFIGURATION = 2;
/** Every test here: a last resort (each wait inside ends on what a process prints). */
const TEST_OPTIONS = { timeout: E2E_TEST_TIMEOUT_MS };

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/** The one line a key command prints on stdout. */
function onlyKey(stdout: string, prefix = 'sk_sandbox_'): string {
  expect(stdout).toMatch(new RegExp(`^${prefix}[A-Za-z0-9_-]{16,128}\\n$`));
  return stdout.trim();
}

// A safety net: each describe already kills its own processes.
afterAll(killAllMkobaProcesses);

describe.concurrent('mkoba serve on a fresh embedded data directory', TEST_OPTIONS, () => {
  const data = temporaryDataDir();
  const env = mkobaEnv({ MKOBA_DATA_DIR: data.dir, PORT: '0' });
  let server: MkobaProcess;
  let banner: Banner;
  let sandboxKey: string;
  let seededWalletCount: number;
  let createdKey: string;
  let createdKeyOrganization: string;
  let bannerText: string;

  const mkoba = new MkobaProcesses();
  afterAll(async () => {
    await mkoba.killAll();
    data.remove();
  });

  it.sequential('says what it does while it creates the database, then prints the banner on stdout: the real base URL, the docs URL and a key that lists the seeded wallets', async () => {
    server = await mkoba.start(['serve'], env);
    // A command issued while the server starts (it holds the lock, its control socket is not open yet)
    // waits for it instead of failing.
    await waitUntil(
      () => fileExists(path.join(data.dir, 'mkoba.lock')),
      READINESS_LAST_RESORT_MS,
      'the server to take the lock',
      server,
    );
    const earlyCommand = mkoba.run(['keys', 'create', '--organization', 'Early Bird'], env);
    banner = await waitForBanner(server);

    expect(banner.port).toBeGreaterThan(0);
    expect(banner.baseUrl).toBe(`http://127.0.0.1:${banner.port}/v1`);
    expect(banner.docsUrl).toBe(`http://127.0.0.1:${banner.port}/docs`);
    // stdout is the banner and nothing else; stderr says, in order, what the first start did.
    bannerText = server.stdout();
    expect(lines(bannerText)).toEqual([
      `Mkoba sandbox API listening on ${banner.baseUrl}`,
      `  API reference: ${banner.docsUrl}   OpenAPI: ${banner.baseUrl}/openapi.json`,
      `  Database: embedded PGlite in ${data.dir}`,
      `  Sandbox API key: ${banner.sandboxApiKey}`,
      `  Try: curl -H 'Authorization: Bearer ${banner.sandboxApiKey}' ${banner.baseUrl}/wallets`,
      '  Stop with Ctrl-C',
    ]);
    const progress = lines(server.stderr());
    expect(progress.slice(0, 4)).toEqual([
      `Creating the embedded database in ${data.dir} (first start only, ~20 s)…`,
      expect.stringMatching(/^Created the embedded database in \d+\.\d s$/),
      expect.stringMatching(/^applied migrations: 0001_foundation, /),
      "seeded the sandbox organization 'Mkoba Sandbox'",
    ]);

    const docs = await http('GET', banner.docsUrl, undefined);
    expect(docs.status).toBe(200);

    expect(banner.sandboxApiKey).toBeDefined();
    sandboxKey = banner.sandboxApiKey ?? '';
    const wallets = await http('GET', `${banner.baseUrl}/wallets`, sandboxKey);
    expect(wallets.status).toBe(200);
    expect(wallets.body.data.length).toBeGreaterThan(0);
    for (const wallet of wallets.body.data) expect(wallet.metadata).toMatchObject({ seed: 'true' });
    seededWalletCount = wallets.body.data.length;

    const early = await earlyCommand;
    expect(early.code, early.stderr).toBe(0);
    expect(early.stderr).toMatch(
      new RegExp(`waiting for mkoba serve \\(process ${server.pid}\\) to finish starting`),
    );
    expect((await http('GET', `${banner.baseUrl}/wallets`, onlyKey(early.stdout))).status).toBe(200);
  });

  it.sequential('keys create while the server runs prints only the new key, and that key works against the server', async () => {
    const result = await mkoba.run(['keys', 'create', '--organization', 'Acme Payments'], env);
    expect(result.code, result.stderr).toBe(0);
    createdKey = onlyKey(result.stdout);
    expect(result.stderr).toMatch(/created key key_\S+ for organization org_\S+ \(new\)/);
    createdKeyOrganization = result.stderr.match(/for organization (org_\S+)/)?.[1] ?? '';

    const wallets = await http('GET', `${banner.baseUrl}/wallets`, createdKey);
    expect(wallets.status).toBe(200);
    expect(wallets.body.data).toEqual([]); // a new organization sees none of the seed's wallets

    const again = await mkoba.run(['keys', 'create', '--organization', 'Acme Payments'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/\(new\)/);
    expect(onlyKey(again.stdout)).not.toBe(createdKey);

    // As the README runs it: with no --organization, the sandbox organization's keys (the seeded one).
    const listed = await mkoba.run(['keys', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(lines(listed.stdout)).toEqual([
      expect.stringMatching(/^key_\S+\tsk_sandbox_\S{4}…\tread,write\tno member\tby seed\tactive$/),
    ]);
  });

  it.sequential("orgs set-webhooks turns an organization's new subscriptions off and on, through the running server", async () => {
    const organizationId = createdKeyOrganization;
    expect(organizationId).toMatch(/^org_/);
    // A public literal address: accepted without a DNS look-up; no event is sent to it.
    const subscribe = () =>
      http('POST', `${banner.baseUrl}/webhook-subscriptions`, createdKey, {
        url: 'https://93.184.215.14/hooks',
        events: ['transfer.settled'],
      });
    const first = await subscribe();
    expect(first.status).toBe(201);

    const off = await mkoba.run(['orgs', 'set-webhooks', organizationId, 'off'], env);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).toContain(`webhook subscriptions for ${organizationId} (Acme Payments): off`);
    const refused = await subscribe();
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('subscriptions_not_enabled');

    const on = await mkoba.run(['orgs', 'set-webhooks', organizationId, 'on'], env);
    expect(on.code, on.stderr).toBe(0);
    const second = await subscribe();
    expect(second.status).toBe(201);
    for (const id of [first.body.id, second.body.id]) {
      expect((await http('DELETE', `${banner.baseUrl}/webhook-subscriptions/${id}`, createdKey)).status).toBe(
        200,
      );
    }

    const unknown = await mkoba.run(['orgs', 'set-webhooks', 'org_01nobody000000000000000000', 'on'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no organization org_01nobody/);
    const misuse = await mkoba.run(['orgs', 'set-webhooks', organizationId, 'maybe'], env);
    expect(misuse.code).toBe(2);
  });

  it.sequential('members add and keys create --member work through the running server; the key acts as the member', async () => {
    const added = await mkoba.run(
      [
        'members',
        'add',
        'Ana@Example.com',
        '--role',
        'approver',
        '--role',
        'initiator',
        '--organization',
        'Acme Payments',
      ],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const memberId = added.stdout.trim();
    expect(memberId).toMatch(/^mem_/);
    expect(added.stderr).toContain('member ana@example.com (approver, initiator) in Acme Payments');
    const key = await mkoba.run(
      ['keys', 'create', '--organization', 'Acme Payments', '--member', 'ana@example.com'],
      env,
    );
    expect(key.code, key.stderr).toBe(0);
    const memberKey = onlyKey(key.stdout);
    expect((await http('GET', `${banner.baseUrl}/wallets`, memberKey)).status).toBe(200);
    // An approver and initiator is no admin: the members list is refused to their key.
    expect((await http('GET', `${banner.baseUrl}/members`, memberKey)).status).toBe(403);
    const beyond = await mkoba.run(
      [
        'keys',
        'create',
        '--organization',
        'Acme Payments',
        '--member',
        'ana@example.com',
        '--scopes',
        'admin',
      ],
      env,
    );
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toContain('cannot hold the admin scope');
    // A one-time console sign-in link for the member, on the running server's own address.
    const link = await mkoba.run(
      ['console-link', '--member', 'ana@example.com', '--organization', 'Acme Payments'],
      env,
    );
    expect(link.code, link.stderr).toBe(0);
    const url = link.stdout.trim();
    expect(url).toMatch(
      new RegExp(`^${banner.baseUrl.replace(/\/v1$/, '')}/console/sign-in/link\\?token=[A-Za-z0-9_-]{43}$`),
    );
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('This one-time link signs you in');
    const stranger = await mkoba.run(
      ['console-link', '--member', 'nobody@example.com', '--organization', 'Acme Payments'],
      env,
    );
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toContain('is not an active member');
    const listed = await mkoba.run(['members', 'list', '--organization', 'Acme Payments'], env);
    expect(listed.stdout).toContain(`${memberId}\tana@example.com\tapprover,initiator\tactive`);
    const removed = await mkoba.run(
      ['members', 'remove', 'ana@example.com', '--organization', 'Acme Payments'],
      env,
    );
    expect(removed.code, removed.stderr).toBe(0);
    const refused = await http('GET', `${banner.baseUrl}/wallets`, memberKey);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('api_key_revoked');
    const noRole = await mkoba.run(
      ['members', 'add', 'bo@example.com', '--organization', 'Acme Payments'],
      env,
    );
    expect(noRole.code).toBe(2);
  });

  it.sequential('batches submit uploads a CSV to the running server, follows it, and reports accepted items apart from settled and failed transfers (--wait waits for them)', async () => {
    const wallets = await http('GET', `${banner.baseUrl}/wallets?limit=100`, sandboxKey);
    const wallet = wallets.body.data.find((w: { currency: string }) => w.currency === 'KES');
    expect(wallet).toBeDefined();
    const funded = await http('POST', `${banner.baseUrl}/sandbox/wallets/${wallet.id}/fund`, sandboxKey, {
      amount: '100.00',
    });
    expect(funded.status).toBe(201);
    const file = path.join(path.dirname(data.dir), 'payroll.csv');
    writeFileSync(
      file,
      'reference,amount,type,network,phone,name\nn1,10.00,mobile_money,mpesa,+254711000601,"Otieno, Jane"\nn2,5.00,mobile_money,mpesa,+254711000602,Baraka\n',
    );
    const cliEnv = { ...env, MKOBA_API_KEY: sandboxKey, MKOBA_API_BASE: banner.baseUrl };
    const submitted = await mkoba.run(['batches', 'submit', file, '--source', wallet.id], cliEnv);
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(submitted.stdout.trim()).toMatch(/^pb_/);
    // Accepted (each item became a transfer) is not paid: the transfers are counted apart.
    expect(submitted.stderr).toMatch(/^completed: 2 accepted, 0 refused, 0 canceled of 2 items$/m);
    const soFar = submitted.stderr.match(/^transfers: (\d+) settled, 0 failed, (\d+) in flight$/m);
    expect(Number(soFar?.[1]) + Number(soFar?.[2]), submitted.stderr).toBe(2);
    expect(submitted.stderr).not.toMatch(/paid,/);

    // With --wait it follows the transfers to their outcome: one settles, one fails at the rail.
    writeFileSync(
      file,
      'reference,amount,type,network,phone\nw1,3.00,mobile_money,mpesa,+254711000604\nw2,2.00,mobile_money,mpesa,+254700000001\n',
    );
    const waited = await mkoba.run(['batches', 'submit', file, '--source', wallet.id, '--wait'], cliEnv);
    expect(waited.code, waited.stderr).toBe(1);
    expect(waited.stderr).toMatch(/^completed: 2 accepted, 0 refused, 0 canceled of 2 items$/m);
    expect(waited.stderr).toMatch(/^transfers: 1 settled, 1 failed, 0 in flight$/m);
    expect(waited.stderr).toContain(
      `outcome: 1 of 2 items settled, 1 failed, 0 refused, 0 canceled; items: GET ${banner.baseUrl}/payment-batches/${waited.stdout.trim()}/items`,
    );
    const badTimeout = await mkoba.run(
      ['batches', 'submit', file, '--source', wallet.id, '--timeout', '0'],
      cliEnv,
    );
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toContain('--timeout takes whole seconds from 1 to 86400');
    writeFileSync(file, 'reference,amount,type,network,phone\nbad,1.001,mobile_money,mpesa,+254711000603\n');
    const refused = await mkoba.run(['batches', 'submit', file, '--source', wallet.id], cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('row 1 items.0.amount');
  });

  it.sequential('export runs through the running server and copies the file where asked', async () => {
    const out = path.join(path.dirname(data.dir), 'transfers.csv');
    const result = await mkoba.run(['export', 'transfers', '--format', 'csv', '--out', out], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    expect(result.stderr).toMatch(/^exp_\S+: \d+ transfers rows, \d+ bytes, sha256 [0-9a-f]{64}$/m);
    const text = readFileSync(out, 'utf8');
    // RFC 4180: the header and every record end in CRLF (rfc4180Records refuses a bare LF).
    const [header, ...records] = rfc4180Records(text);
    expect(header?.slice(0, 4)).toEqual(['id', 'created_at', 'direction', 'status']);
    expect(records.length).toBeGreaterThan(0);
    const misuse = await mkoba.run(['export', 'accounts'], env);
    expect(misuse.code).toBe(2);
  });

  it.sequential('encryption rewrap runs through the running server', async () => {
    const result = await mkoba.run(['encryption', 'rewrap'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/every secret is now under master key ek_[0-9a-f]{16}/);
    expect(fileExists(path.join(data.dir, 'encryption-key'))).toBe(true);
  });

  it.sequential('--scopes read yields a key that reads but gets 403 on a write', async () => {
    const result = await mkoba.run(
      ['keys', 'create', '--organization', 'Read Only Ltd', '--scopes', 'read'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const readKey = onlyKey(result.stdout);

    expect((await http('GET', `${banner.baseUrl}/customers`, readKey)).status).toBe(200);
    const write = await http('POST', `${banner.baseUrl}/customers`, readKey, {
      type: 'individual',
      name: 'Ann',
    });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('insufficient_permissions');
  });

  it.sequential('a second serve on the same data directory fails fast with one clear line; the first keeps working', async () => {
    const second = await mkoba.run(['serve'], env);
    expect(second.code).not.toBe(0);
    expect(second.elapsedMs).toBeLessThan(FAIL_FAST_MS_MAX);
    expect(lines(second.stderr)).toHaveLength(1);
    expect(second.stderr).toMatch(
      new RegExp(`^mkoba: .*in use by process ${server.pid} \\(mkoba serve\\).*MKOBA_DATA_DIR`),
    );

    expect((await http('GET', `${banner.baseUrl}/wallets`, sandboxKey)).status).toBe(200);
  });

  it.sequential('logs one JSON line per request on stderr at the default level, with no key in it', async () => {
    const before = server.stderr().length;
    const response = await http('GET', `${banner.baseUrl}/wallets?limit=1`, sandboxKey);
    expect(response.status).toBe(200);
    await waitUntil(
      () => server.stderr().slice(before).includes(`"request_id":"${response.requestId}"`),
      READINESS_LAST_RESORT_MS,
      'the request log line',
    );
    // The log line of the test before may land after `before` (it is written once the response is sent):
    // every line is a request line, and this request has exactly one.
    const after = lines(server.stderr().slice(before)).map((line) => JSON.parse(line));
    expect(after.every((entry) => entry.msg === 'request')).toBe(true);
    const logged = after.filter((entry) => entry.request_id === response.requestId);
    expect(logged).toEqual([
      expect.objectContaining({
        msg: 'request',
        method: 'GET',
        route: '/v1/wallets',
        status: 200,
        error_code: null,
      }),
    ]);
    expect(logged[0].request_id).toMatch(/^req_/);
    expect(server.stdout()).toBe(bannerText);
    const requestLines = lines(server.stderr()).filter((line) => line.includes('"msg":"request"'));
    expect(requestLines.length).toBeGreaterThan(1);
    for (const key of [sandboxKey, createdKey]) expect(requestLines.join('\n')).not.toContain(key);
  });

  it.sequential('after SIGKILL the stale lock is taken over by the next start, without seeding again and with data intact', async () => {
    const lockFile = path.join(data.dir, 'mkoba.lock');
    expect(await server.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: server.pid, role: 'serve' });

    server = await mkoba.start(['serve'], env);
    banner = await waitForBanner(server);
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: server.pid, role: 'serve' });
    expect(server.stderr()).not.toMatch(/applied migrations/);
    expect(banner.sandboxApiKey).toBe(sandboxKey);

    const wallets = await http('GET', `${banner.baseUrl}/wallets`, sandboxKey);
    expect(wallets.status).toBe(200);
    expect(wallets.body.data).toHaveLength(seededWalletCount);
    expect((await http('GET', `${banner.baseUrl}/wallets`, createdKey)).status).toBe(200);
  });

  it.sequential('stops cleanly on SIGTERM, releasing the lock and the control socket', async () => {
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toMatch(/shutting down/);
    expect(fileExists(path.join(data.dir, 'mkoba.lock'))).toBe(false);
    expect(fileExists(path.join(data.dir, 'control.sock'))).toBe(false);
  });
});

describe.concurrent('mkoba keys create with no server running', TEST_OPTIONS, () => {
  const data = temporaryDataDir();
  const fixedKey = `sk_sandbox_e2e_${randomBytes(12).toString('hex')}`;
  const env = mkobaEnv({ MKOBA_DATA_DIR: data.dir, PORT: '0' });

  const mkoba = new MkobaProcesses();
  afterAll(async () => {
    await mkoba.killAll();
    data.remove();
  });

  it.sequential('works on a fresh data directory; the server then starts on it and seeds exactly MKOBA_SANDBOX_API_KEY', async () => {
    const created = await mkoba.run(['keys', 'create', '--organization', 'Offline Ltd'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = onlyKey(created.stdout);
    expect(fileExists(path.join(data.dir, 'mkoba.lock'))).toBe(false);
    // No server uses this directory and it held no database: the command says it made a new one.
    expect(created.stderr).toContain(
      `mkoba: warning: ${data.dir} held no database, so a new empty one was created there.`,
    );

    const server = await mkoba.start(['serve'], { ...env, MKOBA_SANDBOX_API_KEY: fixedKey });
    const banner = await waitForBanner(server);
    expect(banner.sandboxApiKey).toBe(fixedKey);
    expect((await http('GET', `${banner.baseUrl}/wallets`, key)).status).toBe(200);
    const seeded = await http('GET', `${banner.baseUrl}/wallets`, fixedKey);
    expect(seeded.status).toBe(200);
    expect(seeded.body.data.length).toBeGreaterThan(0);
    expect(await server.stop()).toEqual({ code: 0, signal: null });

    // Once the database exists, a command on it warns of nothing.
    const listed = await mkoba.run(['keys', 'list', '--organization', 'Offline Ltd'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^key_/);
    expect(listed.stderr).not.toContain('warning');
  });

  it.sequential('names PORT in one line when the port is taken', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    try {
      const port = (squatter.address() as net.AddressInfo).port;
      const result = await mkoba.run(['serve'], { ...env, PORT: String(port) });
      expect(result.code).not.toBe(0);
      expect(lines(result.stderr)).toEqual([
        `mkoba: invalid configuration: PORT: ${port} is already in use on 127.0.0.1; pick another PORT`,
      ]);
      expect(fileExists(path.join(data.dir, 'mkoba.lock'))).toBe(false);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});

describe.concurrent('a first start killed while it creates the embedded database', TEST_OPTIONS, () => {
  const data = temporaryDataDir();
  const env = mkobaEnv({ MKOBA_DATA_DIR: data.dir, PORT: '0' });

  const mkoba = new MkobaProcesses();
  afterAll(async () => {
    await mkoba.killAll();
    data.remove();
  });

  it.sequential('leaves a data directory the next start can use', async () => {
    const first = await mkoba.start(['serve'], env);
    // PG_VERSION is among the first files PGlite unpacks: the database is then half-written.
    await waitUntil(
      () => fileExists(path.join(data.dir, 'pgdata.partial', 'PG_VERSION')),
      READINESS_LAST_RESORT_MS,
      'PGlite to start unpacking its cluster',
      first,
    );
    await first.stop('SIGKILL');

    // The next start creates the database anew, as any first start does. Its output is read here as one
    // stream, in the order it was written: progress first, then the banner, and no log line before it.
    const second = await mkoba.start(['serve'], env, { stderrIntoStdout: true });
    const banner = await waitForBanner(second);
    const wallets = await http('GET', `${banner.baseUrl}/wallets`, banner.sandboxApiKey);
    expect(wallets.status).toBe(200);
    expect(wallets.body.data.length).toBeGreaterThan(0);
    // The server's own "listening" log line was held until the banner was out, not dropped.
    await second.waitForStdout(/"msg":"Server listening at /);
    const output = lines(second.stdout());
    const bannerStart = output.findIndex((line) => line.startsWith('Mkoba sandbox API listening on '));
    const bannerEnd = output.findIndex((line) => BANNER_READY_PATTERN.test(line));
    expect(bannerStart, second.stdout()).toBeGreaterThan(0);
    expect(bannerEnd - bannerStart).toBe(5);
    const beforeBanner = output.slice(0, bannerStart);
    expect(beforeBanner.slice(0, 2)).toEqual([
      `Creating the embedded database in ${data.dir} (first start only, ~20 s)…`,
      expect.stringMatching(/^Created the embedded database in \d+\.\d s$/),
    ]);
    expect(beforeBanner.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(output.slice(bannerEnd + 1).some((line) => line.includes('"msg":"Server listening at '))).toBe(
      true,
    );
    await second.stop();
  });
});

describe.concurrent('invalid configuration', TEST_OPTIONS, () => {
  const data = temporaryDataDir();
  const regularFile = path.join(path.dirname(data.dir), 'a-file');
  writeFileSync(regularFile, 'not a directory');
  const mkoba = new MkobaProcesses();
  afterAll(async () => {
    await mkoba.killAll();
    data.remove();
  });

  // Concurrent: each case is only a process start-up.
  it.concurrent.for([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { MKOBA_ENV: 'production' }],
    ['MKOBA_SANDBOX_API_KEY', { MKOBA_SANDBOX_API_KEY: 'bad' }],
    ['MKOBA_SANDBOX_API_KEY', { MKOBA_SANDBOX_API_KEY: 'sk_live_0123456789abcdefXYZ' }],
    ['MKOBA_ENV', { MKOBA_ENV: 'staging' }],
    ['HOST', { HOST: 'not a host' }],
    ['MKOBA_DATA_DIR', { MKOBA_DATA_DIR: regularFile }],
    ['MKOBA_ENCRYPTION_KEY', { MKOBA_ENV: 'production', DATABASE_URL: 'postgres://127.0.0.1:1/none' }],
    ['MKOBA_ENCRYPTION_KEY', { DATABASE_URL: 'postgres://127.0.0.1:1/none' }],
    ['MKOBA_ENCRYPTION_KEY', { MKOBA_ENCRYPTION_KEY: 'too-short' }],
    ['MKOBA_ENCRYPTION_KEYS_PREVIOUS', { MKOBA_ENCRYPTION_KEYS_PREVIOUS: 'x' }],
    ['MKOBA_WEBHOOK_ALLOW_PRIVATE', { MKOBA_WEBHOOK_ALLOW_PRIVATE: 'maybe' }],
    [
      'MKOBA_WEBHOOK_ALLOW_PRIVATE',
      {
        MKOBA_ENV: 'production',
        DATABASE_URL: 'postgres://127.0.0.1:1/none',
        MKOBA_ENCRYPTION_KEY: 'a'.repeat(64),
        MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
      },
    ],
  ] as const)('stops with one line naming %s (%o)', async ([variable, overrides], { expect }) => {
    const result = await mkoba.run(['serve'], mkobaEnv({ MKOBA_DATA_DIR: data.dir, ...overrides }), {
      stopsBeforeOpeningDatabase: true,
    });
    expect(result.code).toBe(EXIT_CODE_INVALID_CONFIGURATION);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^mkoba: invalid configuration: ${variable}: `));
    expect(fileExists(data.dir)).toBe(false); // nothing was touched
  });
});

describe.concurrent('mkoba --help', TEST_OPTIONS, () => {
  const mkoba = new MkobaProcesses();
  afterAll(() => mkoba.killAll());

  it('documents every command on stdout', async () => {
    const result = await mkoba.run(['--help'], mkobaEnv({}));
    expect(result.code).toBe(0);
    for (const command of [
      'mkoba serve',
      'mkoba migrate',
      'mkoba keys create --organization NAME [--scopes',
      'mkoba keys list',
      'mkoba keys revoke',
      'mkoba openapi',
      'mkoba orgs set-webhooks ORG_ID on|off',
      'mkoba encryption rewrap',
    ]) {
      expect(result.stdout).toContain(command);
    }
    for (const variable of [
      'PORT',
      'HOST',
      'DATABASE_URL',
      'MKOBA_DATA_DIR',
      'MKOBA_ENV',
      'MKOBA_SANDBOX_API_KEY',
      'MKOBA_WEBHOOK_ALLOW_PRIVATE',
      'MKOBA_ENCRYPTION_KEY',
      'MKOBA_ENCRYPTION_KEYS_PREVIOUS',
    ]) {
      expect(result.stdout).toContain(variable);
    }
  });

  it('rejects an unknown command with a pointer to the help', async () => {
    const result = await mkoba.run(['frobnicate'], mkobaEnv({}));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown command 'frobnicate'[\s\S]*mkoba help/);
  });
});

describe.concurrent('production on PostgreSQL', TEST_OPTIONS, () => {
  const mkoba = new MkobaProcesses();
  const schema = `e2e_${randomBytes(6).toString('hex')}`;
  let databaseUrl = '';

  beforeAll(async () => {
    if (!TEST_DATABASE_URL) return;
    await createSchema(TEST_DATABASE_URL, schema);
    // node-postgres takes libpq's `options` from the URL: this process's tables live in their own schema.
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  });
  afterAll(async () => {
    await mkoba.killAll();
    if (TEST_DATABASE_URL) await dropSchema(TEST_DATABASE_URL, schema);
  });

  // A server and eight commands, each a process start, on a machine that may be busy.
  it.runIf(TEST_DATABASE_URL)(
    'migrates but never seeds; live keys come from keys create',
    {
      timeout: 3 * READINESS_LAST_RESORT_MS,
    },
    async () => {
      const env = mkobaEnv({
        MKOBA_ENV: 'production',
        DATABASE_URL: databaseUrl,
        PORT: '0',
        MKOBA_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      });
      const server = await mkoba.start(['serve'], env);
      const banner = await waitForBanner(server);
      expect(server.stdout()).toMatch(/^Mkoba production API listening/);
      expect(server.stderr()).toMatch(/applied migrations: 0001_/);
      expect(server.stdout()).not.toMatch(/Sandbox API key/);
      expect(banner.sandboxApiKey).toBeUndefined();

      const seedKeys = await mkoba.run(['keys', 'list', '--organization', SEED_ORGANIZATION], env);
      expect(seedKeys.code, seedKeys.stderr).toBe(0);
      expect(seedKeys.stdout).toBe('');

      // No live key while the launch gates are open (this deployment is not linked to a sandbox): the
      // refusal names them and exits 1; an operator's override, with its reason, lets it through.
      const refused = await mkoba.run(['keys', 'create', '--organization', 'Live Co'], env);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(
        /no production key for 'Live Co': 7 launch gate\(s\) open: mobile_money\/business_verified, /,
      );
      expect(refused.stderr).toContain(
        'mobile_money/rail_providers_configured (missing: mobile_money (mpesa_daraja or mtn_momo))',
      );
      const overridden = await mkoba.run(
        ['launch-gates', 'override', '--organization', 'Live Co', '--reason', 'reviewed by the operator'],
        env,
      );
      expect(overridden.code, overridden.stderr).toBe(0);
      expect(lines(overridden.stdout)).toHaveLength(6);
      // The overrides cover the recorded gates, not a rail with no partner: an admin key (which moves no
      // money) configures one first.
      const stillRefused = await mkoba.run(['keys', 'create', '--organization', 'Live Co'], env);
      expect(stillRefused.code).toBe(1);
      expect(stillRefused.stderr).toContain('mobile_money/rail_providers_configured');
      const admin = await mkoba.run(
        ['keys', 'create', '--organization', 'Live Co', '--scopes', 'admin'],
        env,
      );
      expect(admin.code, admin.stderr).toBe(0);
      const partner = await http(
        'POST',
        `${banner.baseUrl}/rail-partners`,
        onlyKey(admin.stdout, 'sk_live_'),
        {
          partner: 'mpesa_daraja',
          settings: {
            base_url: 'https://api.safaricom.co.ke',
            short_code: '600996',
            initiator_name: 'mkoba-api',
          },
          credentials: {
            consumer_key: 'live-consumer-key',
            consumer_secret: 'live-consumer-secret',
            security_credential: 'live-security-credential',
            passkey: 'live-passkey',
          },
        },
      );
      expect(partner.status, JSON.stringify(partner.body)).toBe(201);
      const created = await mkoba.run(['keys', 'create', '--organization', 'Live Co'], env);
      expect(created.code, created.stderr).toBe(0);
      const liveKey = onlyKey(created.stdout, 'sk_live_');
      const wallets = await http('GET', `${banner.baseUrl}/wallets`, liveKey);
      expect(wallets.status).toBe(200);
      expect(wallets.body.data).toEqual([]);

      // A production organization subscribes to webhooks once the operator enables it.
      const subscribe = () =>
        http('POST', `${banner.baseUrl}/webhook-subscriptions`, liveKey, {
          url: 'https://93.184.215.14/hooks',
          events: ['transfer.settled'],
        });
      expect((await subscribe()).body.code).toBe('subscriptions_not_enabled');
      const organizationId = created.stderr.match(/for organization (org_\S+)/)?.[1] ?? '';
      const enabled = await mkoba.run(['orgs', 'set-webhooks', organizationId, 'on'], env);
      expect(enabled.code, enabled.stderr).toBe(0);
      const subscribed = await subscribe();
      expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201);
      expect(subscribed.body.secret).toMatch(/^whsec_/);

      const migrate = await mkoba.run(['migrate'], env);
      expect(migrate.code, migrate.stderr).toBe(0);
      expect(migrate.stderr).toMatch(/up to date/);

      expect(await server.stop()).toEqual({ code: 0, signal: null });
    },
  );
});
