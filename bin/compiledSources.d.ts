/** The types of compiledSources.js, for the tests that import it. */
export function fingerprintOf(sourceDir: string, esbuildVersion: string, compilerText?: string): string;
export function compiledMain(): Promise<((argv: string[]) => Promise<number>) | undefined>;
