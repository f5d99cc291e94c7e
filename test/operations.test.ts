import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

describe.each(BACKENDS)('operations endpoints on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('healthz and readyz answer, with a Request-Id header', async () => {
    const health = await api(t, 'GET', '/healthz', { key: null });
    expect(health.data).toEqual({ status: 'ok' });
    expect(health.headers['request-id']).toMatch(/^req_/);
    expect((await api(t, 'GET', '/readyz', { key: null })).data).toEqual({ status: 'ready' });
  });

  it('metrics count requests and latencies by route pattern and status', async () => {
    await api(t, 'GET', '/v1/wallets');
    await api(t, 'GET', '/v1/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra');
    await api(t, 'GET', '/v1/wallets', { key: null });
    const metrics = await api(t, 'GET', '/metrics', { key: null });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toMatch(
      /mkoba_http_requests_total\{method="GET",route="\/v1\/wallets",status_code="200"\} 1/,
    );
    expect(metrics.body).toMatch(
      /mkoba_http_requests_total\{method="GET",route="\/v1\/wallets",status_code="401"\} 1/,
    );
    expect(metrics.body).toMatch(
      /mkoba_http_requests_total\{method="GET",route="\/v1\/wallets\/:id",status_code="404"\} 1/,
    );
    expect(metrics.body).toMatch(
      /mkoba_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/v1\/wallets"/,
    );
  });

  it('readyz is a 503 problem when the database is gone', async () => {
    const broken = await startTestApp(backend);
    await broken.db.close();
    const response = await api(broken, 'GET', '/readyz', { key: null });
    expect(response.statusCode).toBe(503);
    expect(response.data.code).toBe('service_unavailable');
    await broken.app.close();
  });
});
