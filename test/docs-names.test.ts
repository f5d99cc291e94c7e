/**
 * README.md and docs/ against the code: every route, event type, error code, environment variable and file
 * they name must exist (in openapi.json, the event and evidence registries, the error codes, the configuration),
 * so a page cannot go stale silently when a name changes or a feature moves.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/domain/events.ts';
import { EVIDENCE_KINDS } from '../src/domain/evidence.ts';

const root = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

const pages: Array<{ path: string; text: string }> = [
  'README.md',
  ...(readdirSync(new URL('docs/', root), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
].map((path) => ({ path, text: read(path) }));

/** Every source file's text (the sources and bin/, which starts them), for names the code spells only as string literals. */
const sourceText = [
  ...(readdirSync(new URL('src/', root), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => read(`src/${file}`)),
  ...readdirSync(new URL('bin/', root))
    .filter((file) => file.endsWith('.js'))
    .map((file) => read(`bin/${file}`)),
].join('\n');

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, Schema> };
}
interface Schema {
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}
const openapi = JSON.parse(read('openapi.json')) as OpenApi;

/** Routes the service serves outside its own document (the document itself). */
const UNDOCUMENTED_ROUTES = ['/v1/openapi.json'];
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function templateMatcher(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
const routes = Object.entries(openapi.paths).map(([template, operations]) => ({
  matcher: templateMatcher(template),
  template,
  methods: new Set(Object.keys(operations).map((method) => method.toUpperCase())),
}));

/** `/v1/{transfers,customers}/{id}` → both paths; `{id}` placeholders stay for the matcher. */
function expandAlternatives(path: string): string[] {
  const group = /\{([^}]*,[^}]*)\}/.exec(path);
  if (!group) return [path];
  const [whole, choices = ''] = group;
  return choices.split(',').flatMap((choice) => expandAlternatives(path.replace(whole, choice)));
}

/** Whether a path named on a page is served; a trailing `…` names every route under a prefix. */
function served(path: string, method?: string): boolean {
  if (UNDOCUMENTED_ROUTES.includes(path)) return method === undefined || method === 'GET';
  // `/v1/deposits/dep_…` names one resource by an id's prefix; `/v1/loans…` every route under a prefix.
  const idSegment = /\/[a-z]+_…$/;
  if (idSegment.test(path)) return served(path.replace(idSegment, '/{id}'), method);
  if (path.endsWith('…')) {
    const prefix = path.slice(0, -1);
    return routes.some((route) => route.template.startsWith(prefix));
  }
  const concrete = path.replace(/\{[^}]+\}/g, 'x');
  return routes.some(
    (route) =>
      (route.matcher.test(path) || route.matcher.test(concrete)) &&
      (method === undefined || route.methods.has(method)),
  );
}

/** The code spans of a page (`…`), where names are written. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] as string);
}

/** Every dotted property path of the document's schemas (from any schema as root), so a field path is never taken for an event. */
function propertyPaths(): Set<string> {
  const paths = new Set<string>();
  const walk = (schema: Schema | undefined, prefix: string, depth: number) => {
    if (!schema || depth > 4) return;
    if (schema.$ref) {
      walk(openapi.components.schemas[schema.$ref.split('/').pop() ?? ''], prefix, depth + 1);
      return;
    }
    for (const part of [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) {
      walk(part, prefix, depth);
    }
    walk(schema.items, prefix, depth);
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const path = prefix === '' ? name : `${prefix}.${name}`;
      paths.add(path);
      walk(property, path, depth + 1);
    }
  };
  // Every schema in the document, request bodies and responses included, is a root a path may start at.
  const visit = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    if ('properties' in node) walk(node as Schema, '', 0);
    for (const child of Object.values(node)) visit(child);
  };
  visit(openapi);
  return paths;
}

/** The problem codes: the members of the closed `ErrorCode` union. */
function problemCodes(): Set<string> {
  const union = /export type ErrorCode =([^;]*);/.exec(read('src/domain/errors.ts'))?.[1] ?? '';
  return new Set([...union.matchAll(/'([a-z_]+)'/g)].map((match) => match[1] as string));
}

describe('the names README.md and docs/ use exist', () => {
  it('finds the pages', () => {
    expect(pages.length).toBeGreaterThan(10);
  });

  it('every /v1 route named is in openapi.json, with the method named beside it', () => {
    const missing: string[] = [];
    for (const { path: page, text } of pages) {
      // A partner's own path (…/mpesa/stkpush/v1/processrequest) is not ours: only a path that starts at /v1.
      for (const match of text.matchAll(/(?<![\w.\-/])(\/v1\/[A-Za-z0-9_{},\-/.…]+)/g)) {
        const named = (match[1] as string).replace(/[.,:/]+$/, '');
        const before = text.slice(Math.max(0, (match.index ?? 0) - 8), match.index);
        const method = HTTP_METHODS.find((verb) => new RegExp(`\\b${verb}\\s+\`?$`).test(before));
        for (const path of expandAlternatives(named)) {
          if (!served(path, method)) missing.push(`${page}: ${method ?? 'any'} ${path}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every event type and evidence kind named is one the code emits or records', () => {
    const known = new Set<string>([...EVENT_TYPES, ...EVIDENCE_KINDS]);
    const families = new Set([...known].map((name) => name.split('.')[0]));
    const fields = propertyPaths();
    const missing: string[] = [];
    for (const { path: page, text } of pages) {
      for (const span of codeSpans(text)) {
        if (!/^[a-z_]+(\.[a-z_*]+)+$/.test(span) || !families.has(span.split('.')[0])) continue;
        if (/\.(ts|md|json|sql)$/.test(span) || fields.has(span)) continue;
        // `transfer.*` names a family: some member of it must exist.
        const prefix = span.split('*')[0] ?? span;
        const exists = span.includes('*')
          ? [...known].some((name) => name.startsWith(prefix))
          : known.has(span);
        if (!exists) missing.push(`${page}: ${span}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every problem code named beside a status is a problem code or a field error code of the code', () => {
    const codes = problemCodes();
    expect(codes.size).toBeGreaterThan(50);
    const missing: string[] = [];
    for (const { path: page, text } of pages) {
      // "409 `wallet_not_active`", "| 413 | `payload_too_large`": a status, then the code.
      for (const match of text.matchAll(/\b[45]\d\d(?: \|)? `([a-z][a-z0-9_]+)`/g)) {
        const code = match[1] as string;
        if (!codes.has(code) && !sourceText.includes(`'${code}'`)) missing.push(`${page}: ${code}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every MKOBA_ environment variable named is one the configuration reads', () => {
    const missing: string[] = [];
    for (const { path: page, text } of pages) {
      // `process.env.X` is an integrator's own variable in an example of their code, not ours.
      for (const match of text.matchAll(/(?<!process\.env\.)\bMKOBA_[A-Z0-9_]*[A-Z0-9]\b(?![_…*])/g)) {
        const variable = match[0];
        const read = sourceText.includes(`'${variable}'`) || sourceText.includes(`env.${variable}`);
        if (!read) missing.push(`${page}: ${variable}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every source, test or bench file named exists', () => {
    const missing: string[] = [];
    for (const page of pages) {
      for (const match of page.text.matchAll(/\b((?:src|test|bench)\/[\w./-]+\.(?:ts|sql))\b/g)) {
        const file = match[1] as string;
        if (!existsSync(new URL(file, root))) missing.push(`${page.path}: ${file}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
