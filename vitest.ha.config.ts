import { defineConfig } from 'vitest/config';

/**
 * `npm run test:ha`: the database failover test (test/ha/), which starts its own etcd, Patroni cluster
 * and HAProxy. Not part of `npm test`: it needs Debian's patroni and etcd-server, and a few minutes.
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
