/**
 * The Node versions package.json's `engines` promises: every installed package (package-lock.json) must
 * accept the oldest of them, so that `npm ci` on it installs without an engine warning and the service
 * runs there. A dependency upgraded past it fails here, naming the package and what it asks for.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

describe('Node engines', () => {
  it('package-lock.json records the engines package.json states', () => {
    expect(lock.packages['']?.engines).toEqual(packageJson.engines);
  });

  it('every installed package accepts the oldest Node the project supports', () => {
    const oldest = semver.minVersion(packageJson.engines.node);
    expect(oldest, `engines.node '${packageJson.engines.node}' has no lowest version`).not.toBeNull();
    const refusing: string[] = [];
    for (const [location, locked] of Object.entries(lock.packages)) {
      // Very old packages wrote `engines` as a list of strings; npm ignores that form.
      const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
      if (location === '' || range === undefined || oldest === null) continue;
      if (!semver.satisfies(oldest, range)) {
        refusing.push(`${location}@${locked.version}: engines.node '${range}'`);
      }
    }
    expect(refusing, `these exclude Node ${oldest?.version}`).toEqual([]);
  });

  it('the check itself refuses a package that wants a newer Node', () => {
    const oldest = semver.minVersion('>=20.19');
    expect(oldest && semver.satisfies(oldest, '>=22')).toBe(false);
    expect(oldest && semver.satisfies(oldest, '^20.19.0 || >=22.12.0')).toBe(true);
  });
});
