/**
 * The rules of docs/ARCHITECTURE.md, checked over source texts (no database, no import of the code checked):
 * SQL only in the store and in modules' repositories; the HTTP edge (src/http/ and modules' routes) never
 * imports the store or a repository; the domain (src/domain/ and modules' domain) imports nothing of ours
 * but pure domain code, and of Node only `crypto`; other code reaches a module only through its `index.ts`
 * (or its pure domain); a module imports only modules below it in `MODULE_ORDER`, and the shared core
 * imports no module but the money seam (only the composition root and the edges put modules together).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface SourceFile {
  /** Relative to the repository's root, with `/` separators: `src/http/app.ts`. */
  path: string;
  text: string;
}

export type ArchitectureRule =
  | 'sql_outside_store'
  | 'http_imports_store'
  | 'domain_imports_outside_domain'
  | 'module_internals'
  | 'module_upward'
  | 'module_unranked';

/**
 * The capability modules under src/modules/, lowest first: a module may import only the modules before it.
 * A new module takes its place here before it can be imported at all.
 */
export const MODULE_ORDER = [
  'ledger',
  'customers',
  'organization',
  'wallets',
  'authorization',
  'compliance',
  'digitalAccounts',
  'apiKeys',
  'fees',
  'transfers',
  'collections',
  'stablecoins',
  'treasury',
  'testClock',
  'webhooks',
  'eventStream',
  'railPartners',
  'receipts',
  'exports',
  'launchGates',
  'paymentBatches',
  'savings',
  'lending',
] as const;

/**
 * The money seam: the ledger and posting module every movement crosses. The shared core and every module
 * may import it (through its index); it imports only the shared core.
 */
export const SEAM_MODULES: readonly string[] = ['ledger'];

/**
 * The composition root and the edges: the only code outside src/modules/ that may import a module (through
 * its index). Everything else outside src/modules/ is the shared core, which modules build on.
 */
const EDGES = [
  'src/main.ts',
  // The composition root's rail side: the passes that move money through rail partners, put together.
  'src/railWork.ts',
  // The HTTP process's start: the sanctions list watch and the server, put together.
  'src/serverHttp.ts',
  'src/cli/',
  'src/console/',
  'src/http/app.ts',
  'src/app/composition.ts',
  // Secrets at rest across their owners: the start-up sealing and the master-key rotation.
  'src/app/secretsAtRest.ts',
  // The console's read models and views join every module's records.
  'src/app/console/',
  'src/store/repositories/console.ts',
  // The registry of governed change kinds, handed to governed changes as `deps.changeKinds`.
  'src/app/governedChangeKinds.ts',
  // The operator commands the CLI and the control channel run, in two files.
  'src/app/admin.ts',
  'src/app/adminCore.ts',
  'src/app/seed.ts',
  'src/modules/registry.ts',
  // The webhook payload schemas document every module's events with that module's resource schema.
  'src/http/eventSchemas.ts',
];

export interface Violation {
  rule: ArchitectureRule;
  path: string;
  line: number;
  detail: string;
}

/** The statements a query text starts with: rows read or written, and a transaction's shape. */
const SQL_STATEMENT =
  /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK|SET\s+(?:TRANSACTION|LOCAL))\b/i;
/** A string literal handed to `.query(`, `.exec(` or `queryMany(` as its first argument. */
const QUERY_CALL = /(?:\.(?:query|exec)|\bqueryMany)\s*(?:<[^>()]*>)?\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*)\1/g;
/** A string literal shaped like a statement wherever it is (built first, passed to `.query(` later). */
const STATEMENT_LITERAL =
  /(['"`])\s*((?:SELECT\s+[^'"`]*?\s+FROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|WITH\s+\w+\s+AS\s*\()\s[^'"`]*)/g;
/** Every form that loads a module: static imports and re-exports, side-effect imports, `import()`. */
const IMPORT_SPECIFIER =
  /(?:\bimport\s+(?:type\s+)?[^'"`;]*?\bfrom\s*|\bexport\s+(?:type\s+)?[^'"`;]*?\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g;
/** What the pure core may use of Node. */
const DOMAIN_NODE_MODULES = new Set(['node:crypto', 'crypto']);

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

function isUnder(file: string, folder: string): boolean {
  return file.startsWith(`${folder}/`);
}

const MODULE_PATH = /^src\/modules\/([^/]+)\/(.+)$/;

/** The module a path is in and its path inside it, or null outside src/modules/<name>/. */
function moduleOf(file: string): { name: string; inner: string } | null {
  const match = MODULE_PATH.exec(file);
  return match ? { name: match[1] as string, inner: match[2] as string } : null;
}

/** A module's layer a path inside it belongs to: `domain.ts` and `domain/…` are `domain`, and so on. */
function layerOf(inner: string): string {
  return inner.split('/')[0]?.replace(/\.ts$/, '') ?? '';
}

function isEdge(file: string): boolean {
  return EDGES.some((edge) => (edge.endsWith('/') ? file.startsWith(edge) : file === edge));
}

function isRepository(file: string): boolean {
  const inModule = moduleOf(file);
  return inModule !== null && layerOf(inModule.inner) === 'repository';
}

function isDomain(file: string): boolean {
  const inModule = moduleOf(file);
  return isUnder(file, 'src/domain') || (inModule !== null && layerOf(inModule.inner) === 'domain');
}

function isHttpEdge(file: string): boolean {
  const inModule = moduleOf(file);
  return isUnder(file, 'src/http') || (inModule !== null && layerOf(inModule.inner) === 'routes');
}

/** Each module a file loads, resolved to a repository path when relative, with its line. */
export function importsOf(file: SourceFile): { specifier: string; resolved: string | null; line: number }[] {
  const found: { specifier: string; resolved: string | null; line: number }[] = [];
  for (const match of file.text.matchAll(IMPORT_SPECIFIER)) {
    const specifier = match[2] as string;
    const resolved = specifier.startsWith('.')
      ? path.posix.normalize(path.posix.join(path.posix.dirname(file.path), specifier))
      : null;
    found.push({ specifier, resolved, line: lineOf(file.text, match.index) });
  }
  return found;
}

function sqlOutsideStore(file: SourceFile): Violation[] {
  if (isUnder(file.path, 'src/store') || isRepository(file.path)) return [];
  const lines = new Map<number, string>();
  for (const match of file.text.matchAll(QUERY_CALL)) {
    if (SQL_STATEMENT.test(match[2] as string)) lines.set(lineOf(file.text, match.index), match[2] as string);
  }
  for (const match of file.text.matchAll(STATEMENT_LITERAL)) {
    lines.set(lineOf(file.text, match.index), match[2] as string);
  }
  return [...lines].map(([line, sql]) => ({
    rule: 'sql_outside_store',
    path: file.path,
    line,
    detail: `SQL outside the store and repositories: ${sql.trim().split(/\s+/).slice(0, 4).join(' ')} …`,
  }));
}

function httpImportsStore(file: SourceFile): Violation[] {
  if (!isHttpEdge(file.path)) return [];
  return importsOf(file)
    .filter(
      (i) =>
        i.resolved !== null &&
        (isUnder(i.resolved, 'src/store') || i.resolved === 'src/store' || isRepository(i.resolved)),
    )
    .map((i) => ({
      rule: 'http_imports_store',
      path: file.path,
      line: i.line,
      detail: `the HTTP edge imports the store: ${i.specifier}`,
    }));
}

function domainImportsOutside(file: SourceFile): Violation[] {
  if (!isDomain(file.path)) return [];
  return importsOf(file)
    .filter((i) =>
      i.resolved !== null
        ? !isDomain(i.resolved)
        : (i.specifier.startsWith('node:') || BUILTIN_NAMES.has(i.specifier)) &&
          !DOMAIN_NODE_MODULES.has(i.specifier),
    )
    .map((i) => ({
      rule: 'domain_imports_outside_domain',
      path: file.path,
      line: i.line,
      detail: `the domain imports outside the pure domain: ${i.specifier}`,
    }));
}

/** Node's modules a file may name without the `node:` prefix. */
const BUILTIN_NAMES = new Set(['fs', 'fs/promises', 'net', 'http', 'https', 'dns', 'child_process', 'os']);

/**
 * Imports that reach into a module: from outside it, only its `index.ts` may be imported, or its pure domain
 * by domain code (which must stay pure, so cannot load an index) and by the shared core (the seam's).
 */
function moduleInternals(file: SourceFile): Violation[] {
  const from = moduleOf(file.path);
  return importsOf(file).flatMap((i) => {
    const to = i.resolved === null ? null : moduleOf(i.resolved);
    if (to === null || to.name === from?.name || to.inner === 'index.ts') return [];
    if (isDomain(file.path) && layerOf(to.inner) === 'domain') return [];
    // The shared core reads the money seam's pure posting rules (balances, account kinds) without its index,
    // which would load the seam's routes and use cases on top of the core they are built on.
    if (from === null && SEAM_MODULES.includes(to.name) && layerOf(to.inner) === 'domain') return [];
    return [
      {
        rule: 'module_internals' as const,
        path: file.path,
        line: i.line,
        detail: `imports module ${to.name}'s ${to.inner}, not its index.ts: ${i.specifier}`,
      },
    ];
  });
}

/** Imports against the modules' order, and from the shared core into any module. */
function moduleUpward(file: SourceFile): Violation[] {
  if (!isUnder(file.path, 'src') || isEdge(file.path)) return [];
  const from = moduleOf(file.path);
  const order: readonly string[] = MODULE_ORDER;
  if (from !== null && !order.includes(from.name))
    return [
      {
        rule: 'module_unranked',
        path: file.path,
        line: 1,
        detail: `module ${from.name} is not in MODULE_ORDER`,
      },
    ];
  return importsOf(file).flatMap((i) => {
    const to = i.resolved === null ? null : moduleOf(i.resolved);
    if (to === null || to.name === from?.name) return [];
    if (SEAM_MODULES.includes(to.name) && (from === null || !SEAM_MODULES.includes(from.name))) return [];
    if (from !== null && order.indexOf(to.name) !== -1 && order.indexOf(to.name) < order.indexOf(from.name))
      return [];
    return [
      {
        rule: 'module_upward' as const,
        path: file.path,
        line: i.line,
        detail:
          from === null
            ? `the shared core imports module ${to.name}: ${i.specifier}`
            : `module ${from.name} imports module ${to.name}, which is not below it: ${i.specifier}`,
      },
    ];
  });
}

/** Every violation of the rules in the files given. */
export function checkArchitecture(files: readonly SourceFile[]): Violation[] {
  return files.flatMap((file) => [
    ...sqlOutsideStore(file),
    ...httpImportsStore(file),
    ...domainImportsOutside(file),
    ...moduleInternals(file),
    ...moduleUpward(file),
  ]);
}

/** The TypeScript files under a folder of the repository, as the checker reads them. */
export function readSources(root: string, folder: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts'))
        files.push({ path: child, text: readFileSync(path.join(root, child), 'utf8') });
    }
  };
  walk(folder);
  return files;
}
