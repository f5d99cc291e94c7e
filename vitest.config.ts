import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files run two at a time whatever the machine: Vitest's default (one fewer than the cores) is a
 * single file at a time on a two-core machine, and most of a file's time is spent waiting on PostgreSQL,
 * child processes and simulators, not on its own CPU.
 */
const TEST_FILES_AT_ONCE = 2;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The failover test runs on its own: `npm run test:ha` (vitest.ha.config.ts).
    exclude: [...configDefaults.exclude, 'test/ha/**'],
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: TEST_FILES_AT_ONCE,
    // A worker keeps its loaded modules from one file to the next: importing the application again for each
    // file cost several seconds of CPU per file. Every file still opens its own databases and servers.
    isolate: false,
    reporters: ['default'],
  },
});
