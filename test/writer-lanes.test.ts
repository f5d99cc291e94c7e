/**
 * Ledger writer lanes: transfers from distinct wallets commit in parallel lanes, a hot wallet's in one;
 * the same rules and invariants hold whatever the number of lanes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/variables.ts';
import { LEDGER_WRITER_LANES_DEFAULT, loadConfig } from '../src/config.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

const LANES = 8;

describe.each(BACKENDS)(`a ledger writer with ${LANES} lanes on %s`, (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { ledgerWriterLanes: LANES });
  });
  afterAll(async () => {
    await expectLedgerHealthy(t).finally(() => t.close());
  });

  it('distinct wallets and one hot wallet at once: every transfer decided once, balances exact', async () => {
    const sources = await Promise.all(Array.from({ length: 12 }, () => fundedWallet(t, '10.00')));
    const targets = await Promise.all(Array.from({ length: 12 }, () => fundedWallet(t, '0')));
    const hot = await fundedWallet(t, '5.00');
    const send = (source: string, destination: string, key: string) =>
      api(t, 'POST', '/v1/transfers', {
        body: { source, destination, amount: '1.00', currency: 'KES', rail: 'internal' },
        headers: { 'idempotency-key': key },
      });
    const distinct = sources.flatMap((source, i) =>
      Array.from({ length: 3 }, (_, n) => send(source, targets[i] as string, `lane-${backend}-${i}-${n}`)),
    );
    // The hot wallet can pay 5 of 10; each request is also sent twice under its key.
    const hotOnes = Array.from({ length: 10 }, (_, n) => [
      send(hot, targets[n] as string, `hot-${backend}-${n}`),
      send(hot, targets[n] as string, `hot-${backend}-${n}`),
    ]).flat();
    const answers = await Promise.all([...distinct, ...hotOnes]);
    expect(answers.slice(0, distinct.length).every((a) => a.statusCode === 201)).toBe(true);
    const hotAnswers = answers.slice(distinct.length);
    const firsts = hotAnswers.filter((a) => a.headers['idempotent-replayed'] === undefined);
    expect(firsts.filter((a) => a.statusCode === 201)).toHaveLength(5);
    expect(firsts.filter((a) => a.statusCode === 422)).toHaveLength(5);
    for (let n = 0; n < 10; n++) {
      const [a, b] = [hotAnswers[2 * n], hotAnswers[2 * n + 1]];
      // A repeat under the same key replays the original's answer, byte for byte, or is told it is in flight.
      if (b?.statusCode !== 409 && a?.statusCode !== 409) expect(b?.body).toBe(a?.body);
    }
    for (const source of sources) expect(await balanceOf(t, source)).toMatchObject({ available: '7.00' });
    expect(await balanceOf(t, hot)).toMatchObject({ available: '0.00', current: '0.00' });
  });
});

describe('MKOBA_LEDGER_WRITER_LANES', () => {
  it('defaults by database and takes 1 to 32', () => {
    expect(loadConfig({}).ledgerWriterLanes).toBeUndefined();
    expect(LEDGER_WRITER_LANES_DEFAULT).toBeGreaterThanOrEqual(1);
    expect(loadConfig({ MKOBA_LEDGER_WRITER_LANES: '8' }).ledgerWriterLanes).toBe(8);
    for (const bad of ['0', '33', 'four', '-1', '2.5']) {
      expect(() => loadConfig({ MKOBA_LEDGER_WRITER_LANES: bad }), bad).toThrow(ConfigError);
    }
  });
});
