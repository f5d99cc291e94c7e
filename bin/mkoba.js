#!/usr/bin/env node
// Runs the TypeScript sources with no build step, so `npx mkoba` works in a fresh clone: compiled on first
// use into a cache (compiledSources.js), or directly through tsx when they cannot be.
import { compiledMain } from './compiledSources.js';

// `mkoba openapi | head` closes stdout early: that is the reader's choice, not a crash.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

async function sourcesThroughTsx() {
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport('../src/cli/main.ts', import.meta.url)).main;
}

const main = (await compiledMain()) ?? (await sourcesThroughTsx());
process.exitCode = await main(process.argv.slice(2));
