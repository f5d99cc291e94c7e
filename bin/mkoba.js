#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx mkoba` works in a fresh clone with no build step.
import { tsImport } from 'tsx/esm/api';

const { main } = await tsImport('../src/cli/main.ts', import.meta.url);
process.exitCode = await main(process.argv.slice(2));
