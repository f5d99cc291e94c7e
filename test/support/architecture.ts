/**
 * The layering rules of docs/ARCHITECTURE.md, checked over source texts (no database, no import of the code
 * checked): SQL only under src/store/, the HTTP edge never imports the store, the domain imports nothing of
 * ours outside src/domain/ and of Node only `crypto`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface SourceFile {
  /** Relative to the repository's root, with `/` separators: `src/http/app.ts`. */
  path: string;
  text: string;
}

export type ArchitectureRule = 'sql_outside_store' | 'http_imports_store' | 'domain_imports_outside_domain';

export interface Violation {
  rule: ArchitectureRule;
  path: string;
  line: number;
  detail: string;
}

/** The statements a query text starts with. */
const SQL_STATEMENT = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
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
  if (isUnder(file.path, 'src/store')) return [];
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
    detail: `SQL outside src/store/: ${sql.trim().split(/\s+/).slice(0, 4).join(' ')} …`,
  }));
}

function httpImportsStore(file: SourceFile): Violation[] {
  if (!isUnder(file.path, 'src/http')) return [];
  return importsOf(file)
    .filter((i) => i.resolved !== null && (isUnder(i.resolved, 'src/store') || i.resolved === 'src/store'))
    .map((i) => ({
      rule: 'http_imports_store',
      path: file.path,
      line: i.line,
      detail: `the HTTP edge imports the store: ${i.specifier}`,
    }));
}

function domainImportsOutside(file: SourceFile): Violation[] {
  if (!isUnder(file.path, 'src/domain')) return [];
  return importsOf(file)
    .filter((i) =>
      i.resolved !== null
        ? !isUnder(i.resolved, 'src/domain')
        : (i.specifier.startsWith('node:') || BUILTIN_NAMES.has(i.specifier)) &&
          !DOMAIN_NODE_MODULES.has(i.specifier),
    )
    .map((i) => ({
      rule: 'domain_imports_outside_domain',
      path: file.path,
      line: i.line,
      detail: `the domain imports outside src/domain/: ${i.specifier}`,
    }));
}

/** Node's modules a file may name without the `node:` prefix. */
const BUILTIN_NAMES = new Set(['fs', 'fs/promises', 'net', 'http', 'https', 'dns', 'child_process', 'os']);

/** Every violation of the layering rules in the files given. */
export function checkArchitecture(files: readonly SourceFile[]): Violation[] {
  return files.flatMap((file) => [
    ...sqlOutsideStore(file),
    ...httpImportsStore(file),
    ...domainImportsOutside(file),
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
