/**
 * `node bin/mkoba.js` runs the sources compiled once into a cache (bin/compiledSources.js), or through tsx
 * with MKOBA_COMPILE=0: both are the same application, and a compilation is never reused for other sources.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../bin/compiledSources.js';
import { E2E_TEST_TIMEOUT_MS, killAllMkobaProcesses, mkobaEnv, runMkoba } from './mkobaProcess.ts';

afterAll(killAllMkobaProcesses);

const REPOSITORY_DIR = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = path.join(REPOSITORY_DIR, 'node_modules', '.cache', 'mkoba-compiled');

/** The folder of the current sources' compilation, compiled first by running `mkoba help` compiled. */
async function compiledDir(): Promise<string> {
  const run = await runMkoba(['help'], mkobaEnv({ MKOBA_COMPILE: undefined }));
  expect(run.code, run.stderr).toBe(0);
  const esbuild = await import('esbuild');
  return path.join(CACHE_DIR, fingerprintOf(path.join(REPOSITORY_DIR, 'src'), esbuild.version));
}

describe('the compiled sources', () => {
  it('serve the same API document as the sources run through tsx', {
    timeout: E2E_TEST_TIMEOUT_MS,
  }, async () => {
    const [compiled, throughTsx] = await Promise.all([
      runMkoba(['openapi'], mkobaEnv({ MKOBA_COMPILE: undefined })),
      runMkoba(['openapi'], mkobaEnv({ MKOBA_COMPILE: '0' })),
    ]);
    expect(compiled.code, compiled.stderr).toBe(0);
    expect(throughTsx.code, throughTsx.stderr).toBe(0);
    // Compiling falls back to tsx with a line on stderr; here it did not.
    expect(compiled.stderr).not.toContain('running the sources through tsx');
    expect(JSON.parse(compiled.stdout).paths).toBeDefined();
    expect(compiled.stdout).toBe(throughTsx.stdout);
  });

  it('map every compiled line to a TypeScript file on disk, without carrying the sources again', {
    timeout: E2E_TEST_TIMEOUT_MS,
  }, async () => {
    const outdir = await compiledDir();
    const map = JSON.parse(readFileSync(path.join(outdir, 'mkoba.js.map'), 'utf8')) as {
      sources: string[];
      sourcesContent?: unknown;
      mappings: string;
    };
    expect(map.sourcesContent).toBeUndefined();
    expect(map.mappings.length).toBeGreaterThan(0);
    const sources = map.sources.map((source) => path.resolve(outdir, source));
    expect(sources).toContain(path.join(REPOSITORY_DIR, 'src', 'cli', 'main.ts'));
    for (const source of sources) expect(existsSync(source), source).toBe(true);
  });

  it('load at start only the packages every process needs: the rest when a process uses them', {
    timeout: E2E_TEST_TIMEOUT_MS,
  }, async () => {
    const compiled = readFileSync(path.join(await compiledDir(), 'mkoba.js'), 'utf8');
    // esbuild puts every module's static imports of packages at the top of the one file, lazily imported
    // modules' too: these, which only some processes use, must be imported where they are used.
    const atStart = [...compiled.matchAll(/^import\s[^;]*?\sfrom\s+"([^"]+)";$/gms)].map((m) => m[1]);
    expect(atStart).toContain('fastify');
    for (const lazy of [
      '@electric-sql/pglite',
      '@opentelemetry/api',
      '@opentelemetry/sdk-trace-node',
      'ioredis',
      '@nats-io/transport-node',
      '@nats-io/jetstream',
      'cli-progress',
      'pdfkit',
    ]) {
      expect(atStart, lazy).not.toContain(lazy);
      expect(compiled, lazy).toContain(`import("${lazy}")`);
    }
  });

  it('are fingerprinted by every source file: an edit, a new file or a removed one compiles anew', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mkoba-fingerprint-'));
    try {
      mkdirSync(path.join(dir, 'cli'));
      writeFileSync(path.join(dir, 'cli', 'main.ts'), 'export const a = 1;\n');
      writeFileSync(path.join(dir, 'other.ts'), 'export const b = 2;\n');
      const first = fingerprintOf(dir, '0.0.0');
      expect(fingerprintOf(dir, '0.0.0')).toBe(first);
      expect(fingerprintOf(dir, '0.0.1')).not.toBe(first);

      const later = new Date(Date.now() + 60_000);
      utimesSync(path.join(dir, 'cli', 'main.ts'), later, later);
      const touched = fingerprintOf(dir, '0.0.0');
      expect(touched).not.toBe(first);

      writeFileSync(path.join(dir, 'added.ts'), '');
      const added = fingerprintOf(dir, '0.0.0');
      expect(added).not.toBe(touched);

      rmSync(path.join(dir, 'other.ts'));
      const removed = fingerprintOf(dir, '0.0.0');
      expect(removed).not.toBe(added);

      // The compiler's own text (its esbuild options) is part of it too.
      expect(fingerprintOf(dir, '0.0.0', 'other options')).not.toBe(removed);
      expect(fingerprintOf(dir, '0.0.0', 'other options')).toBe(fingerprintOf(dir, '0.0.0', 'other options'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
