/**
 * The operator console in a real browser: Playwright (playwright-core) drives Debian's Chromium against a
 * running `mkoba serve` (started in this process, with its workers, on a fresh embedded database). It
 * signs in by link and by password and does each page's main action, scans every page with axe-core
 * (failing on serious and critical violations) and saves a screenshot of each under
 * test-artifacts/console/. One browser serves the whole file.
 *
 * Without a Chromium (CHROMIUM_PATH, /usr/bin/chromium or /usr/bin/chromium-browser) the file is skipped
 * with the reason printed; `.ci/run` installs Debian's chromium, so CI always runs it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { SANDBOX_ORGANIZATION_NAME } from '../src/app/seed.ts';
import { loadConfig } from '../src/config.ts';
import { type RunningServer, startServer } from '../src/main.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (candidate): candidate is string => candidate !== undefined && candidate !== '' && existsSync(candidate),
);
const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/console/', import.meta.url));
/** One page's wait for an element or a navigation; generous for a loaded CI machine. */
const STEP_TIMEOUT_MS = 30_000;
/** How long the export worker may take to finish a small export. */
const EXPORT_READY_TIMEOUT_MS = 60_000;
/** One test: several page loads, scans and waits on a machine other test files keep busy. */
const BROWSER_TEST_TIMEOUT_MS = 180_000;
const PASSWORD = 'a long console password';
const ADMIN = 'ana@example.com';
const VIEWER = 'vic@example.com';
const INITIATOR = 'ivy@example.com';

/** Waits (bounded) until the element's text contains `text`. */
async function hasText(locator: Locator, text: string): Promise<void> {
  await locator.first().waitFor();
  await expect
    .poll(async () => (await locator.first().textContent()) ?? '', { timeout: STEP_TIMEOUT_MS })
    .toContain(text);
}

/** Waits (bounded) until the locator matches exactly `n` elements. */
async function hasCount(locator: Locator, n: number): Promise<void> {
  await expect.poll(() => locator.count(), { timeout: STEP_TIMEOUT_MS }).toBe(n);
}

if (!CHROMIUM) {
  console.log(
    'console.browser.test.ts skipped: no Chromium found (set CHROMIUM_PATH, or apt-get install -y chromium)',
  );
}

describe.skipIf(!CHROMIUM)('operator console in Chromium', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  let server: RunningServer;
  let dataDir: string;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  let adminKey: string;
  let initiatorKey: string;
  const previousLogLevel = process.env.LOG_LEVEL;

  async function call(method: string, url: string, key: string, body?: unknown) {
    const response = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    return JSON.parse(text);
  }

  async function consoleLink(email: string): Promise<string> {
    const result = await runAdminCommand(server.deps, {
      name: 'console.link',
      organization: SANDBOX_ORGANIZATION_NAME,
      member: email,
    });
    if (result.name !== 'console.link') throw new Error('no link');
    return `${server.url}/console/sign-in/link?token=${result.token}`;
  }

  /** axe-core on the page as it stands: serious and critical violations fail the test. */
  async function scan(p: Page, name: string) {
    await p.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
    const results = await new AxeBuilder({ page: p })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
      .analyze();
    const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(
      serious.map(
        (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      ),
      `${name}: accessibility violations`,
    ).toEqual([]);
  }

  async function open(p: Page, url: string, name: string) {
    const response = await p.goto(`${server.url}${url}`);
    expect(response?.status(), url).toBe(200);
    await scan(p, name);
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = mkdtempSync(path.join(tmpdir(), 'mkoba-console-'));
    process.env.LOG_LEVEL = 'silent';
    receiver = await startReceiver();
    server = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        MKOBA_DATA_DIR: dataDir,
        MKOBA_ENV: 'sandbox',
        MKOBA_SANDBOX_SIMULATORS: '0',
        MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
        MKOBA_RATE_LIMITS: 'off',
      }),
      () => {},
    );
    const add = (email: string, roles: string[]) =>
      runAdminCommand(server.deps, {
        name: 'members.add',
        organization: SANDBOX_ORGANIZATION_NAME,
        email,
        roles,
      });
    await add(ADMIN, ['admin', 'compliance', 'approver']);
    await add(VIEWER, ['viewer']);
    await add(INITIATOR, ['initiator']);
    adminKey = (
      await issueApiKey(server.deps, { organizationName: SANDBOX_ORGANIZATION_NAME, memberEmail: ADMIN })
    ).key;
    initiatorKey = (
      await issueApiKey(server.deps, { organizationName: SANDBOX_ORGANIZATION_NAME, memberEmail: INITIATOR })
    ).key;

    // Some traffic: a funded wallet, payouts, one that waits for approval, an AML alert, a batch, a
    // webhook subscription, and a statement with a line nobody knows.
    const customer = (await call('GET', '/v1/customers?limit=1', adminKey)).data[0].id;
    const wallet = (await call('POST', '/v1/wallets', adminKey, { owner: customer, currency: 'KES' })).id;
    await call('POST', `/v1/sandbox/wallets/${wallet}/fund`, adminKey, { amount: '100000.00' });
    await call('POST', '/v1/aml/rules', adminKey, {
      name: 'Large payouts',
      type: 'single_transfer_threshold',
      parameters: { currency: 'KES', amount: '5000.00' },
      action: 'alert',
    });
    for (const [phone, amount] of [
      ['+254711000101', '150.00'],
      ['+254711000102', '2500.00'],
      ['+254711000103', '6000.00'],
    ]) {
      await call('POST', '/v1/transfers', adminKey, {
        source: wallet,
        destination: { type: 'mobile_money', network: 'mpesa', phone },
        amount,
        currency: 'KES',
      });
    }
    await call('PUT', '/v1/policies', adminKey, {
      rules: [
        {
          id: 'large',
          match: { amount: [{ currency: 'KES', gte: '20000.00' }] },
          action: 'require_approval',
          approval: { quorum: 1, roles: ['approver'] },
        },
      ],
    });
    await call('POST', '/v1/transfers', initiatorKey, {
      source: wallet,
      destination: { type: 'mobile_money', network: 'mpesa', phone: '+254711000199' },
      amount: '25000.00',
      currency: 'KES',
    });
    await call('POST', '/v1/payment-batches', adminKey, {
      source: wallet,
      currency: 'KES',
      reference: 'november-payroll',
      items: [
        {
          reference: 'emp-1',
          destination: { type: 'mobile_money', network: 'mpesa', phone: '+254711000201' },
          amount: '100.00',
        },
        {
          reference: 'emp-2',
          destination: { type: 'mobile_money', network: 'mpesa', phone: '+254711000202' },
          amount: '200.00',
        },
      ],
    });
    await call('POST', '/v1/webhook-subscriptions', adminKey, { url: receiver.url, events: ['*'] });
    const today = new Date().toISOString().slice(0, 10);
    const statement = await call('POST', '/v1/sandbox/statements', adminKey, {
      rail: 'mobile_money',
      from: today,
      to: today,
      mismatches: ['unknown'],
    });
    await call('POST', '/v1/reconciliation/statements', adminKey, {
      rail: 'mobile_money',
      from: today,
      to: today,
      lines: statement.lines,
    });

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    admin.setDefaultTimeout(STEP_TIMEOUT_MS);
    page = await admin.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (previousLogLevel === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = previousLogLevel;
  });

  it('signs in with a one-time link, sets a password, signs out and back in with it', async () => {
    await page.goto(`${server.url}/console`);
    await expect.poll(() => page.url()).toContain('/console/sign-in');
    await scan(page, '01-sign-in');
    await page.goto(await consoleLink(ADMIN));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/console\/account/);
    await page.getByLabel('New password', { exact: false }).first().fill(PASSWORD);
    await page.getByLabel('New password again').fill(PASSWORD);
    await scan(page, '02-account');
    await page.getByRole('button', { name: 'Save password' }).click();
    await hasText(page.getByRole('status'), 'Your password is set');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await hasText(page.getByRole('status'), 'You are signed out');
    await page.getByLabel('Email', { exact: true }).fill(ADMIN);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/console`);
    const cookies = await admin.cookies();
    expect(cookies.find((c) => c.name === 'mkoba_console')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
  });

  it('home: today’s volume, success rate by rail, and the chart', async () => {
    await open(page, '/console', '03-home');
    await hasCount(page.locator('#transfers-chart canvas'), 1);
    await hasText(page.getByRole('table', { name: /by rail/ }), 'mobile money');
  });

  it('transfers: search by phone, open one, see its timeline, ledger entries and deliveries', async () => {
    await open(page, '/console/transfers', '04-transfers');
    await page.getByLabel('Phone').fill('+254711000102');
    await page.getByRole('button', { name: 'Search' }).click();
    const rows = page.getByRole('table', { name: /Transfers/ }).locator('tbody tr');
    await hasCount(rows, 1);
    await rows.first().getByRole('link', { name: /^tr_/ }).click();
    await page.getByRole('heading', { name: 'Status timeline' }).waitFor();
    await page.getByRole('table', { name: /Journal entries/ }).waitFor();
    await scan(page, '05-transfer');
  });

  it('customers and wallets: balances', async () => {
    await open(page, '/console/customers', '06-customers');
    await page.getByRole('table').locator('tbody tr a').first().click();
    await page.getByRole('heading', { name: 'Wallets' }).waitFor();
    await open(page, '/console/wallets', '07-wallets');
    await hasText(page.getByRole('table'), 'KES');
    await page.getByRole('table').locator('tbody tr a').first().click();
    await page.getByRole('link', { name: 'Statement' }).click();
    await page
      .getByRole('table', { name: 'Entries in the period, oldest first' })
      .or(page.getByText('No entries in this period.'))
      .waitFor();
    await scan(page, '07b-wallet-statement');
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download as CSV' }).click(),
    ]);
    expect(await file.failure()).toBeNull();
    expect(file.suggestedFilename()).toMatch(/\.csv$/);
  });

  it('approvals: the checker approves with a comment; maker ≠ checker is shown', async () => {
    await open(page, '/console/approvals', '08-approvals');
    await page.getByRole('table').locator('tbody tr a').first().click();
    await page.getByText('Initiated by (maker)').waitFor();
    await page.getByLabel('Comment').fill('Invoice 4471 checked');
    await scan(page, '09-approval');
    await page.getByRole('button', { name: 'Approve' }).click();
    await hasText(page.getByRole('status'), 'Your vote is recorded');
    await hasText(page.getByRole('table', { name: 'Votes cast, in order' }), 'Invoice 4471 checked');
  });

  it('review cases and AML alerts: clear a case, resolve an alert', async () => {
    await open(page, '/console/reviews', '10-reviews');
    const review = page.getByRole('table').locator('tbody tr').first();
    await review.getByRole('button', { name: 'Clear' }).click();
    await hasText(page.getByRole('status'), 'The case is decided');
    await open(page, '/console/alerts', '11-alerts');
    const alert = page.getByRole('table').locator('tbody tr').first();
    await alert.getByLabel('Disposition').selectOption('false_positive');
    await alert.getByLabel('Note').fill('Known payroll run');
    await alert.getByRole('button', { name: 'Resolve' }).click();
    await hasText(page.getByRole('status'), 'The alert is resolved');
  });

  it('reconciliation: resolve an exception', async () => {
    await open(page, '/console/reconciliation', '12-reconciliation');
    const row = page.getByRole('table').locator('tbody tr').first();
    await row.getByLabel('Action').selectOption('write_off');
    await row.getByLabel('Note', { exact: true }).fill('Not ours: partner test line');
    await row.getByRole('button', { name: 'Resolve' }).click();
    await hasText(page.getByRole('status'), 'The exception is resolved');
  });

  it('payment batches: a batch with each item’s result', async () => {
    await open(page, '/console/batches', '13-batches');
    await page.getByRole('link', { name: /^pb_/ }).first().click();
    await hasText(page.getByRole('table', { name: /Items in row order/ }), 'emp-2');
    await scan(page, '14-batch');
  });

  it('webhooks: send a test event, see the delivery and its response, redeliver, recover, rotate the secret', async () => {
    await open(page, '/console/webhooks', '15-webhooks');
    await page
      .getByRole('link', { name: /^whsub_/ })
      .first()
      .click();
    await page.getByLabel('Event type').selectOption('transfer.settled');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await hasText(page.getByRole('status'), 'A test event was emitted');
    // The dispatcher delivers it to the receiver; the log shows the attempt once it is made.
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.getByRole('table', { name: /Latest deliveries/ }).textContent();
        },
        { timeout: STEP_TIMEOUT_MS },
      )
      .toContain('HTTP 200');
    await scan(page, '16-subscription');
    await page.getByRole('button', { name: 'Redeliver' }).first().click();
    await hasText(page.getByRole('status'), 'queued for delivery again');
    await page
      .getByLabel('Events created at or after (UTC)')
      .fill(new Date(Date.now() - 3_600_000).toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Re-send' }).click();
    await hasText(page.getByRole('status'), 'since that time');
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await hasText(page.locator('#new-secret'), 'whsec_');
  });

  it('API keys: create one (shown once) and revoke it', async () => {
    await open(page, '/console/api-keys', '17-api-keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key').textContent()) ?? '';
    expect(key).toMatch(/^sk_sandbox_/);
    expect(
      (await fetch(`${server.url}/v1/wallets`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);
    const row = page.getByRole('row').filter({ hasText: key.slice(0, 15) });
    page.once('dialog', (dialog) => dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await hasText(page.getByRole('status'), 'The key is revoked');
    expect(
      (await fetch(`${server.url}/v1/wallets`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(401);
  });

  it('exports: start one, follow its progress, download it', async () => {
    await open(page, '/console/exports', '18-exports');
    await page.getByLabel('Type').selectOption('transfers');
    await page.getByRole('button', { name: 'Start export' }).click();
    await hasText(page.getByRole('status'), 'The export is queued');
    const download = page.getByRole('link', { name: 'Download' }).first();
    await download.waitFor({ timeout: EXPORT_READY_TIMEOUT_MS });
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(await file.failure()).toBeNull();
    expect(file.suggestedFilename()).toMatch(/\.csv$/);
  });

  it('launch gates: each product’s gates with their state and what decided them', async () => {
    await open(page, '/console/launch-gates', '18b-launch-gates');
    await page.getByRole('table', { name: 'Launch gates by product' }).waitFor();
    await page.getByText('contacts named').first().waitFor();
  });

  it('rail partners: the page, with what a deployment without partners means', async () => {
    // This server runs no partner simulators: its organization has no rail partner configured.
    await open(page, '/console/rail-partners', '18c-rail-partners');
    await page.getByText('No rail partner is configured').waitFor();
    await page.getByText('they are sandbox-only').waitFor();
  });

  it('the API reference at /docs loads its document from /v1/openapi.json, under Mkoba’s name', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const docs = await context.newPage();
    const fetched: string[] = [];
    docs.on('request', (request) => fetched.push(new URL(request.url()).pathname));
    const documentLoaded = docs.waitForResponse((r) => new URL(r.url()).pathname === '/v1/openapi.json');
    await docs.goto(`${server.url}/docs`);
    expect((await documentLoaded).status()).toBe(200);
    await hasText(docs.locator('.information-container .title'), 'Mkoba API');
    expect(await docs.title()).toBe('Mkoba API reference');
    expect(await docs.locator('.topbar img').getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    // The definition picker offers the one document, by Mkoba's name (options are hidden until opened).
    expect(await docs.locator('.topbar select').inputValue()).toBe('/v1/openapi.json');
    expect(await docs.locator('.topbar select option').allTextContents()).toEqual(['Mkoba API reference']);
    expect(await docs.locator('.topbar').textContent()).not.toMatch(/swagger/i);
    expect(fetched).not.toContain('/docs/json');
    await docs.screenshot({ path: path.join(ARTIFACTS, '20-api-reference.png') });
    await context.close();
  });

  it('a viewer sees the queues but cannot act', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const viewer = await context.newPage();
    await viewer.goto(await consoleLink(VIEWER));
    await viewer.getByRole('button', { name: 'Continue' }).click();
    await viewer.waitForURL(/\/console\/account/);
    await open(viewer, '/console/webhooks', '19-viewer-webhooks');
    await viewer
      .getByRole('link', { name: /^whsub_/ })
      .first()
      .click();
    await viewer.getByText('let you see this but not').waitFor();
    await hasCount(viewer.getByRole('button', { name: 'Rotate secret' }), 0);
    await hasCount(
      viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }),
      0,
    );
    const refused = await viewer.goto(`${server.url}/console/api-keys`);
    expect(refused?.status()).toBe(403);
    await context.close();
  });
});
