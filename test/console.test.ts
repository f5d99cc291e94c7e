/**
 * The operator console over HTTP (app.inject): sign-in by one-time link and by password, session cookies,
 * CSRF refusals, idle expiry, rate-limited sign-in, and the member's roles bounding what each page shows
 * and each form does, exactly as the API's scopes do. The browser walk-through is test/console.browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { newEvent, recordEvents } from '../src/app/events.ts';
import { CONSOLE_SESSION_IDLE_MINUTES } from '../src/domain/console.ts';
import { RAIL_PARTNER_HEALTH_WINDOW_HOURS } from '../src/modules/railPartners/index.ts';
import { momoSimulatorPartner } from '../src/partnerSimulators.ts';
import { startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';
import { ConsoleClient, signedIn, signInLinkToken, useLink } from './support/console.ts';
import { api, BACKENDS, startTestApp, TEST_RATE_LIMITS, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const PASSWORD = 'correct horse battery staple';

describe.each(BACKENDS)('operator console on %s', (backend) => {
  let t: TestApp;
  let org: TestOrganization;
  let admin: { id: string; email: string; key: string };
  let viewer: { id: string; email: string; key: string };
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    org = await newOrganization(t);
    admin = await org.member(['admin', 'compliance']);
    viewer = await org.member(['viewer']);
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  it('sends a visitor without a session to sign-in, and serves its static files to anyone', async () => {
    const client = new ConsoleClient(t);
    const home = await client.get('/console');
    expect(home.statusCode).toBe(303);
    expect(home.headers.location).toBe('/console/sign-in?next=%2Fconsole');
    const signIn = await client.get('/console/sign-in');
    expect(signIn.statusCode).toBe(200);
    expect(signIn.headers['content-security-policy']).toContain("script-src 'self'");
    expect(signIn.headers['x-frame-options']).toBe('DENY');
    expect(signIn.body).toContain('<label for="email">Email</label>');
    for (const file of ['console.css', 'console.js', 'uPlot.iife.min.js', 'uPlot.min.css']) {
      expect((await client.get(`/console/static/${file}`)).statusCode, file).toBe(200);
    }
    expect((await client.get('/console/static/..%2Fplugin.ts')).statusCode).toBe(404);
  });

  it('signs in once with a link; the session cookie is HTTP-only and SameSite=Strict, Secure off plain-http localhost', async () => {
    const token = await signInLinkToken(t, org.name, admin.email);
    const client = new ConsoleClient(t);
    const used = await useLink(client, token);
    expect(used.statusCode, used.body).toBe(303);
    const cookie = (
      used.cookies as { name: string; httpOnly?: boolean; sameSite?: string; secure?: boolean }[]
    ).find((c) => c.name === 'mkoba_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.secure).toBeFalsy();
    // No password yet: the member is asked to set one.
    expect(used.headers.location).toBe('/console/account?notice=link_signed_in');
    expect((await client.get('/console')).statusCode).toBe(200);
    // The link works once.
    const again = await useLink(new ConsoleClient(t), token);
    expect(again.statusCode).toBe(401);
    expect(again.body).toContain('already used, has expired, or is not valid');

    // Two browsers racing with one link: one session, whatever the order.
    const raced = await signInLinkToken(t, org.name, admin.email);
    const [a, b] = await Promise.all([
      useLink(new ConsoleClient(t), raced),
      useLink(new ConsoleClient(t), raced),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([303, 401]);

    // Anywhere but plain-http localhost the cookie is Secure and bound to the host (__Host-).
    const remote = new ConsoleClient(t, 'console.example.com');
    const secure = await useLink(remote, await signInLinkToken(t, org.name, admin.email));
    expect(secure.statusCode, secure.body).toBe(303);
    const hostCookie = (secure.cookies as { name: string; secure?: boolean; path?: string }[]).find(
      (c) => c.name === '__Host-mkoba_console',
    );
    expect(hostCookie).toMatchObject({ secure: true, path: '/' });
  });

  it('sets a password, signs out, and signs in with it; a wrong password says nothing about which part was wrong', async () => {
    const client = await signedIn(t, org.name, viewer.email);
    const short = await client.submit('/console/account', '/console/account/password', {
      password: 'short',
      confirmation: 'short',
    });
    expect(short.statusCode).toBe(400);
    const set = await client.submit('/console/account', '/console/account/password', {
      password: PASSWORD,
      confirmation: PASSWORD,
    });
    expect(set.statusCode, set.body).toBe(303);
    const out = await client.submit('/console', '/console/sign-out', {});
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/console/sign-in?notice=signed_out');
    expect((await client.get('/console')).statusCode).toBe(303);

    const wrong = await client.submit('/console/sign-in', '/console/sign-in', {
      email: viewer.email,
      password: `${PASSWORD}!`,
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('The email or password is wrong.');
    const unknown = await client.submit('/console/sign-in', '/console/sign-in', {
      email: 'nobody@example.com',
      password: PASSWORD,
    });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.body).toContain('The email or password is wrong.');
    const right = await client.submit('/console/sign-in', '/console/sign-in', {
      email: viewer.email.toUpperCase(),
      password: PASSWORD,
      next: '/console/transfers',
    });
    expect(right.statusCode, right.body).toBe(303);
    expect(right.headers.location).toBe('/console/transfers');
    // `next` never leaves the console.
    await client.submit('/console', '/console/sign-out', {});
    const offsite = await client.submit('/console/sign-in', '/console/sign-in', {
      email: viewer.email,
      password: PASSWORD,
      next: '//evil.example/console',
    });
    expect(offsite.headers.location).toBe('/console');
  });

  it('refuses a form without the session’s CSRF token, or from another origin', async () => {
    const client = await signedIn(t, org.name, admin.email);
    const missing = await client.post('/console/sign-out', {});
    expect(missing.statusCode).toBe(403);
    const forged = await client.post('/console/sign-out', { _csrf: 'A'.repeat(43) });
    expect(forged.statusCode).toBe(403);
    const page = await client.get('/console');
    const otherOrigin = await client.post(
      '/console/sign-out',
      { _csrf: page.csrf ?? '' },
      { origin: 'https://evil.example' },
    );
    expect(otherOrigin.statusCode).toBe(403);
    // Still signed in after all three.
    expect((await client.get('/console')).statusCode).toBe(200);
    // The sign-in form has its own token (against login CSRF).
    const anonymous = new ConsoleClient(t);
    const bare = await anonymous.post('/console/sign-in', { email: viewer.email, password: PASSWORD });
    expect(bare.statusCode).toBe(403);
  });

  it('binds every page and form to the member’s roles as the API binds their keys', async () => {
    const client = await signedIn(t, org.name, viewer.email);
    for (const path of [
      '/console',
      '/console/transfers',
      '/console/customers',
      '/console/wallets',
      '/console/approvals',
      '/console/batches',
      '/console/webhooks',
      '/console/exports',
      '/console/launch-gates',
    ]) {
      expect((await client.get(path)).statusCode, path).toBe(200);
    }
    for (const path of [
      '/console/reviews',
      '/console/alerts',
      '/console/reconciliation',
      '/console/api-keys',
    ]) {
      const refused = await client.get(path);
      expect(refused.statusCode, path).toBe(403);
      expect(refused.body).toContain('do not allow this');
    }
    // The navigation offers only what the roles allow.
    const home = await client.get('/console');
    expect(home.body).not.toContain('href="/console/api-keys"');
    expect(home.body).toContain('href="/console/transfers"');
    // Forms a viewer may not use are refused even when posted by hand, and the same key the API uses agrees.
    const rotate = await client.submit(
      '/console',
      '/console/webhooks/whsub_00000000000000000000000000/rotate',
      {},
    );
    expect(rotate.statusCode).toBe(403);
    const keys = await client.submit('/console', '/console/api-keys', { scopes: 'read' });
    expect(keys.statusCode).toBe(403);
    expect((await api(t, 'GET', '/v1/reviews', { key: viewer.key })).statusCode).toBe(403);
  });

  it('shows maker ≠ checker: the initiator cannot vote, an approver’s vote moves the transfer and is evidence of the session', async () => {
    const put = await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [
          {
            id: 'large',
            match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['approver'] },
          },
        ],
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    const initiator = await org.member(['initiator', 'approver']);
    const approver = await org.member(['approver']);
    const wallet = await fundedWallet(t, '5000.00', 'KES', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: initiator.key,
      body: { source: wallet, destination: mobileMoney('+254711000222'), amount: '1500.00', currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const approvalId = created.data.approval as string;

    const maker = await signedIn(t, org.name, initiator.email);
    const own = await maker.get(`/console/approvals/${approvalId}`);
    expect(own.statusCode).toBe(200);
    expect(own.body).toContain('The member who initiated this cannot vote on its approval.');
    expect(own.body).not.toContain('value="approve"');
    const forced = await maker.post(`/console/approvals/${approvalId}/vote`, {
      _csrf: own.csrf ?? '',
      decision: 'approve',
    });
    expect(forced.statusCode).toBe(403);
    expect(forced.body).toContain('cannot vote');

    const checker = await signedIn(t, org.name, approver.email);
    const queue = await checker.get('/console/approvals');
    expect(queue.body).toContain(approvalId);
    expect(queue.body).toContain('can vote');
    const voted = await checker.submit(
      `/console/approvals/${approvalId}`,
      `/console/approvals/${approvalId}/vote`,
      {
        decision: 'approve',
        comment: 'invoice checked',
      },
    );
    expect(voted.statusCode, voted.body).toBe(303);
    const after = await api(t, 'GET', `/v1/approvals/${approvalId}`, { key: org.key });
    expect(after.data).toMatchObject({
      status: 'approved',
      votes: [{ member: approver.id, comment: 'invoice checked' }],
    });
    expect((await api(t, 'GET', `/v1/transfers/${created.data.id}`, { key: org.key })).data.status).not.toBe(
      'pending_approval',
    );
    const evidence = await api(t, 'GET', `/v1/transfers/${created.data.id}/evidence`, { key: org.key });
    const vote = evidence.data.data.find((r: { kind: string }) => r.kind === 'approval.vote');
    expect(vote.actor).toMatch(/^csn_/);
    expect(vote.actor_member).toBe(approver.id);
    // The transfer's page shows it, with its timeline and ledger entries.
    const detail = await checker.get(`/console/transfers/${created.data.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('Status timeline');
    expect(detail.body).toContain('Ledger entries');
    const search = await checker.get('/console/transfers?phone=%2B254711000222');
    expect(search.body).toContain(created.data.id);
    const none = await checker.get('/console/transfers?phone=%2B254700000000');
    expect(none.body).not.toContain(created.data.id);
    await api(t, 'PUT', '/v1/policies', { key: org.key, body: { rules: [] } });
    await expectLedgerHealthy(t);
  });

  it(`ends a session after ${CONSOLE_SESSION_IDLE_MINUTES} idle minutes, and when the member is removed`, async () => {
    const member = await org.member(['viewer']);
    const client = await signedIn(t, org.name, member.email);
    expect((await client.get('/console')).statusCode).toBe(200);
    const start = Date.now();
    t.deps.now = () => new Date(start + (CONSOLE_SESSION_IDLE_MINUTES - 1) * 60_000);
    expect((await client.get('/console')).statusCode).toBe(200);
    // Idle is measured from the last request, so the session lives on after this one ...
    t.deps.now = () => new Date(start + (2 * CONSOLE_SESSION_IDLE_MINUTES - 3) * 60_000);
    expect((await client.get('/console')).statusCode).toBe(200);
    // ... and ends once no request came for the whole idle time.
    t.deps.now = () => new Date(start + 3 * CONSOLE_SESSION_IDLE_MINUTES * 60_000);
    const expired = await client.get('/console/transfers');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Ftransfers&expired=idle');
    t.deps.now = realNow;
    expect((await client.get('/console')).statusCode).toBe(303);

    const removedLater = await signedIn(t, org.name, member.email);
    await runAdminCommand(t.deps, { name: 'members.remove', organization: org.name, email: member.email });
    const gone = await removedLater.get('/console');
    expect(gone.headers.location).toContain('expired=member_removed');
  });

  it('shows each product’s launch gates as the API lists them, open until done', async () => {
    const client = await signedIn(t, org.name, viewer.email);
    const page = await client.get('/console/launch-gates');
    expect(page.statusCode).toBe(200);
    const listed = (await api(t, 'GET', '/v1/launch-gates', { key: org.key })).data.data as {
      gate: string;
      state: string;
    }[];
    expect(listed.length).toBeGreaterThan(0);
    const open = listed.filter((g) => g.state === 'open').length;
    expect(page.body).toContain(`${open} of ${listed.length} gates open`);
    for (const g of listed) expect(page.body).toContain(g.gate.replace(/_/g, ' '));
  });

  it('shows each configured rail partner with its health to admins: status, circuit, callbacks, balance query', async () => {
    const client = await signedIn(t, org.name, admin.email);
    // Callback addresses exist only with a public URL (MKOBA_PUBLIC_URL).
    t.deps.publicUrl = 'https://mkoba.example.com';
    const momo = await startMomoSimulator();
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: admin.key,
      body: momoSimulatorPartner(momo),
    });
    expect(created.statusCode, created.body).toBe(201);
    const configId = created.data.id as string;
    // MoMo answers a balance query at once.
    const asked = await api(t, 'POST', `/v1/rail-partners/${configId}/balance-queries`, {
      key: admin.key,
      headers: { 'idempotency-key': `console-balance-${configId}` },
    });
    await momo.close();
    t.deps.publicUrl = undefined;
    expect(asked.statusCode, asked.body).toBe(201);
    expect(asked.data.status).toBe('reported');
    // Two callbacks not in MoMo's shape: stored and marked malformed, as a partner's bad callbacks are.
    for (const body of ['{"not":"momo"}', '{"still":"not momo"}']) {
      const sent = await t.app.inject({
        method: 'POST',
        url: `${new URL(created.data.callback_url).pathname}/disbursement`,
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
      expect(sent.statusCode, sent.body).toBe(400);
    }
    const stored = await api(t, 'GET', '/v1/rail-callbacks?limit=10', { key: admin.key });
    expect(stored.statusCode, stored.body).toBe(200);
    const mine = (stored.data.data as { rail_partner: string; status: string; received_at: string }[]).filter(
      (c) => c.rail_partner === configId,
    );
    expect(mine.map((c) => c.status)).toEqual(['malformed', 'malformed']);
    // The breaker's announcement, as the worker records it when the partner keeps failing.
    const pausedAt = new Date();
    await t.deps.store.transaction((tx) =>
      recordEvents(tx, t.deps, [
        newEvent(
          t.deps,
          {
            organizationId: org.organizationId,
            type: 'rail_partner.paused',
            resourceId: configId,
            data: { rail_partner_id: configId, partner: 'mtn_momo', paused_for_ms: 60_000 },
          },
          pausedAt,
        ),
      ]),
    );

    const page = await client.get('/console/rail-partners');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Configured rail partners and their health');
    const row = page.body.slice(page.body.indexOf(configId));
    expect(row).toContain('mobile_money (mtn)');
    // The markets it carries, as the rail-provider gate counts them (its target environment's, or all in MTN's sandbox).
    expect(row).toMatch(/<td>mtn:UG(, mtn:RW, mtn:GH, mtn:ZA)?<\/td>/);
    expect(row).toContain('status-active');
    expect(row).toContain(`until <time datetime="${new Date(pausedAt.getTime() + 60_000).toISOString()}"`);
    expect(row).toContain(`<time datetime="${mine[0]?.received_at}"`);
    expect(row).toContain('malformed 2');
    expect(row).toContain(`status-reported"`);
    expect(row).toContain(`<time datetime="${asked.data.reported_at}"`);
    expect(page.body).toContain('1 of');
    expect(page.body).toContain('sandbox-only');

    // Disabled, it says so; a viewer, like a key without `admin`, is refused the page.
    await api(t, 'PATCH', `/v1/rail-partners/${configId}`, { key: admin.key, body: { status: 'disabled' } });
    expect((await client.get('/console/rail-partners')).body).toContain('status-disabled');
    // A day later the callbacks are out of the window, the pause is over; the last callback is still shown.
    t.deps.now = () => new Date(Date.now() + (RAIL_PARTNER_HEALTH_WINDOW_HOURS + 1) * 3_600_000);
    try {
      // Signed in again: the first session has long gone idle by then.
      const later = await (await signedIn(t, org.name, admin.email)).get('/console/rail-partners');
      const laterRow = later.body.slice(later.body.indexOf(configId));
      expect(laterRow).not.toContain('received 2');
      expect(laterRow).toContain('closed');
      expect(laterRow).toContain(`<time datetime="${mine[0]?.received_at}"`);
    } finally {
      t.deps.now = realNow;
    }
    const viewerClient = await signedIn(t, org.name, viewer.email);
    expect((await viewerClient.get('/console/rail-partners')).statusCode).toBe(403);
    expect((await api(t, 'GET', '/v1/rail-partners', { key: viewer.key })).statusCode).toBe(403);
  });

  it('shows a wallet’s statement as the API gives it, and downloads the same statement as CSV', async () => {
    const wallet = await fundedWallet(t, '250.00', 'KES', org.key);
    const today = new Date().toISOString().slice(0, 10);
    const client = await signedIn(t, org.name, viewer.email);
    const detail = await client.get(`/console/wallets/${wallet}`);
    expect(detail.body).toContain(`href="/console/wallets/${wallet}/statement"`);
    const page = await client.get(`/console/wallets/${wallet}/statement?from=${today}&to=${today}`);
    expect(page.statusCode, page.body).toBe(200);
    const statement = (
      await api(t, 'GET', `/v1/wallets/${wallet}/statement?from=${today}&to=${today}`, { key: org.key })
    ).data;
    expect(statement.entries.length).toBeGreaterThan(0);
    expect(page.body).toContain(`${statement.closing_balance} KES`);
    for (const entry of statement.entries) expect(page.body).toContain(entry.balance);
    const csv = await client.get(`/console/wallets/${wallet}/statement.csv?from=${today}&to=${today}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const fromApi = await api(
      t,
      'GET',
      `/v1/wallets/${wallet}/statement?from=${today}&to=${today}&format=csv`,
      {
        key: org.key,
      },
    );
    expect(csv.body.split('\n')[0]).toBe(fromApi.body.split('\n')[0]);
    expect(csv.body.split('\n').length).toBe(fromApi.body.split('\n').length);
    // Another organization's wallet is not found, as through the API.
    const other = await fundedWallet(t, '1.00', 'KES');
    expect((await client.get(`/console/wallets/${other}/statement`)).statusCode).toBe(404);
  });

  it('shows customer and owner names beside ids: wallets, transfers, ledger postings, review cases, AML alerts', async () => {
    const named = async (name: string, balance: string) => {
      const owner = (
        await api(t, 'POST', '/v1/customers', { key: org.key, body: { type: 'individual', name } })
      ).data.id as string;
      const wallet = (await api(t, 'POST', '/v1/wallets', { key: org.key, body: { owner, currency: 'KES' } }))
        .data.id as string;
      if (balance !== '0') {
        await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
          key: org.key,
          body: { amount: balance },
        });
      }
      return { owner, wallet };
    };
    const payer = await named('Amina Wanjiru', '100000.00');
    const payee = await named('Baraka Otieno', '0');
    const internal = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: payer.wallet, destination: payee.wallet, amount: '10.00', currency: 'KES' },
    });
    expect(internal.statusCode, internal.body).toBe(201);
    for (const [name, action] of [
      ['Reviewed payouts', 'review'],
      ['Large payouts', 'alert'],
    ] as const) {
      const rule = await api(t, 'POST', '/v1/aml/rules', {
        key: org.key,
        body: {
          name,
          type: 'single_transfer_threshold',
          parameters: { currency: 'KES', amount: action === 'review' ? '9000.00' : '5000.00' },
          action,
        },
      });
      expect(rule.statusCode, rule.body).toBe(201);
    }
    for (const amount of ['6000.00', '9500.00']) {
      const payout = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: { source: payer.wallet, destination: mobileMoney('+254711000777'), amount, currency: 'KES' },
      });
      expect(payout.statusCode, payout.body).toBe(201);
    }

    const client = await signedIn(t, org.name, admin.email);
    /** The table row that names `id`, as HTML. */
    const rowOf = (body: string, id: string) =>
      body.match(new RegExp(`<tr>(?:(?!</tr>)[\\s\\S])*${id}(?:(?!</tr>)[\\s\\S])*</tr>`))?.[0] ?? '';
    const owned = (body: string, id: string, name: string) => {
      expect(rowOf(body, id), `${id} beside ${name}`).toContain(`>${name}</a>`);
    };

    const wallets = (await client.get('/console/wallets')).body;
    owned(wallets, payer.wallet, 'Amina Wanjiru');
    owned(wallets, payee.wallet, 'Baraka Otieno');
    expect(rowOf(wallets, payer.wallet)).toContain(payer.owner);
    const wallet = (await client.get(`/console/wallets/${payer.wallet}`)).body;
    expect(wallet).toMatch(
      new RegExp(`<dt>Owner</dt><dd><a [^>]*>Amina Wanjiru</a> <code[^>]*>${payer.owner}</code>`),
    );
    owned(wallet, internal.data.id, 'Baraka Otieno');

    const transfers = (await client.get('/console/transfers')).body;
    const row = rowOf(transfers, internal.data.id);
    expect(row).toContain('>Amina Wanjiru</a>');
    expect(row).toContain('>Baraka Otieno</a>');
    const detail = (await client.get(`/console/transfers/${internal.data.id}`)).body;
    const postings = detail.match(/<ul class="postings">[\s\S]*?<\/ul>/)?.[0] ?? '';
    expect(postings).toContain(
      `${payer.wallet}</code></a> <span class="hint"><a href="/console/customers/${payer.owner}">Amina Wanjiru</a>`,
    );
    expect(postings).toContain(
      `${payee.wallet}</code></a> <span class="hint"><a href="/console/customers/${payee.owner}">Baraka Otieno</a>`,
    );

    const reviews = (await api(t, 'GET', '/v1/reviews', { key: org.key })).data.data;
    expect(reviews.length).toBeGreaterThan(0);
    owned((await client.get('/console/reviews')).body, reviews[0].id, 'Amina Wanjiru');
    const alerts = (await api(t, 'GET', '/v1/aml/alerts', { key: org.key })).data.data;
    expect(alerts.length).toBeGreaterThan(0);
    owned((await client.get('/console/alerts')).body, alerts[0].id, 'Amina Wanjiru');
  });

  it('creates an API key shown once (it works at once) and revokes it', async () => {
    const client = await signedIn(t, org.name, admin.email);
    const created = await client.submit('/console/api-keys', '/console/api-keys', { scopes: ['read'] });
    expect(created.statusCode, created.body).toBe(200);
    const key = /<code class="reveal" id="new-key">([^<]+)<\/code>/.exec(created.body)?.[1] ?? '';
    expect(key).toMatch(/^sk_sandbox_/);
    expect((await api(t, 'GET', '/v1/wallets', { key })).statusCode).toBe(200);
    const listed = await client.get('/console/api-keys');
    expect(listed.body).not.toContain(key);
    const keyId = /<h2>New key (key_[0-9a-z]+)<\/h2>/.exec(created.body)?.[1] ?? '';
    const revoked = await client.submit('/console/api-keys', `/console/api-keys/${keyId}/revoke`, {});
    expect(revoked.statusCode, revoked.body).toBe(303);
    expect((await api(t, 'GET', '/v1/wallets', { key })).statusCode).toBe(401);
    // Another organization's key is not this admin's to revoke.
    const other = await newOrganization(t);
    const foreign = await api(t, 'GET', '/v1/wallets', { key: other.key });
    expect(foreign.statusCode).toBe(200);
  });

  it('starts an export, reports its progress as JSON, and a double-submitted form starts it once', async () => {
    const client = await signedIn(t, org.name, viewer.email);
    const page = await client.get('/console/exports');
    const form = { _csrf: page.csrf ?? '', _form: page.formKey ?? '', type: 'transfers', format: 'csv' };
    const first = await client.post('/console/exports', form);
    const second = await client.post('/console/exports', form);
    expect([first.statusCode, second.statusCode]).toEqual([303, 303]);
    const listed = await api(t, 'GET', '/v1/exports', { key: org.key });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.data.data).toHaveLength(1);
    const status = await client.get(`/console/exports/${listed.data.data[0].id}/status`);
    expect(JSON.parse(status.body)).toMatchObject({ status: 'queued', rows_written: 0 });
    // Evidence needs the compliance scope, as through the API.
    const refused = await client.post('/console/exports', {
      ...form,
      _form: 'x'.repeat(24),
      type: 'evidence',
    });
    expect(refused.statusCode).toBe(403);
  });
});

describe.each(BACKENDS)('console sign-in rate limit on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', {
      rateLimits: { ...TEST_RATE_LIMITS, authFailures: { capacity: 2, refillPerSecond: 1 / 3600 } },
    });
  });
  afterAll(() => t.close());

  it('charges failed sign-ins to the address’s failed-authentication bucket, which API keys share', async () => {
    const org = await newOrganization(t);
    const member = await org.member(['viewer']);
    const client = new ConsoleClient(t);
    for (let i = 0; i < 2; i++) {
      const failed = await client.submit('/console/sign-in', '/console/sign-in', {
        email: member.email,
        password: 'not the password at all',
      });
      expect(failed.statusCode).toBe(401);
    }
    const limited = await client.submit('/console/sign-in', '/console/sign-in', {
      email: member.email,
      password: 'not the password at all',
    });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // A valid link is refused too while the address is limited, and so is an API key from it.
    const link = await useLink(new ConsoleClient(t), await signInLinkToken(t, org.name, member.email));
    expect(link.statusCode).toBe(429);
    expect(
      (await api(t, 'GET', '/v1/wallets', { key: 'sk_sandbox_wrongwrongwrongwrongwrong' })).statusCode,
    ).toBe(429);
  });
});
