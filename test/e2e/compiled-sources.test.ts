/**
 * `node bin/mkoba.js` runs the sources compiled once into a cache (bin/compiledSources.js), or through tsx
 * with MKOBA_COMPILE=0: both are the same application, and a compilation is never reused for other sources.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../bin/compiledSources.js';
import { E2E_TEST_TIMEOUT_MS, killAllMkobaProcesses, mkobaEnv, runMkoba } from './mkobaProcess.ts';

afterAll(killAllMkobaProcesses);

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
      expect(fingerprintOf(dir, '0.0.0')).not.toBe(added);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
