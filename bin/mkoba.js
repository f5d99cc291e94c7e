#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx mkoba` works in a fresh clone with no build step.
import { tsImport } from 'tsx/esm/api';

// `mkoba openapi | head` closes stdout early: that is the reader's choice, not a crash.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const { main } = await tsImport('../src/cli/main.ts', import.meta.url);
process.exitCode = await main(process.argv.slice(2));
