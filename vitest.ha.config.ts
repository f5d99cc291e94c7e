import { defineConfig } from 'vitest/config';

/**
 * `npm run test:ha`: the database failover test (test/ha/), which starts its own etcd, Patroni cluster
 * and HAProxy and publishes to the NATS on 127.0.0.1:4222 (TEST_NATS_URL). Not part of `npm test`: it needs
 * Debian's patroni and etcd-server, and a few minutes.
 */
export default defineConfig({
  test: {
    include: ['test/ha/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
