/**
 * Generates packages/sdk/src/generated.ts from the repository's openapi.json: a TypeScript type per
 * component schema, request, query and response types per operation, the client's method signatures and
 * the operation table the client runs on. Run after openapi.json changes:
 *
 *   npm run generate -w @mkoba/sdk            # write src/generated.ts
 *   npm run generate -w @mkoba/sdk -- --check # exit 1 when it is stale
 *
 * The output is formatted with the repository's Biome, so the committed file is exactly what this writes.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const OPENAPI_FILE = fileURLToPath(new URL('../../../openapi.json', import.meta.url));
export const GENERATED_FILE = fileURLToPath(new URL('../src/generated.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GENERATED_PATH_IN_REPO = 'packages/sdk/src/generated.ts';
const BIOME_BIN = fileURLToPath(new URL('../../../node_modules/.bin/biome', import.meta.url));
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Headers an operation may take that the client handles (Idempotency-Key) or passes on from `options.headers` (a list's Consistency-Token). */
const HANDLED_HEADERS = new Set([IDEMPOTENCY_HEADER, 'consistency-token']);

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface MediaTypes {
  [contentType: string]: { schema?: Schema };
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: MediaTypes };
  responses: Record<string, { content?: MediaTypes }>;
}

export interface OpenApiDocument {
  info: { title: string; version: string };
  paths: Record<string, Partial<Record<(typeof HTTP_METHODS)[number], Operation>>>;
  /** OpenAPI 3.1 webhooks: one POST per event type, its body the event in either spelling. */
  webhooks?: Record<string, { post?: Operation }>;
  components?: { schemas?: Record<string, Schema> };
}

/**
 * Each webhook's event type and its body's component in each spelling (`oneOf` of the snake_case and the
 * camelCase envelope, in that order), from the document's `webhooks`.
 */
export function webhookEventsOf(
  document: OpenApiDocument,
): { type: string; snakeCase: string; camelCase: string }[] {
  return Object.entries(document.webhooks ?? {}).map(([type, item]) => {
    const [snake, camel] = jsonSchemaOf(item.post?.requestBody?.content)?.oneOf ?? [];
    const component = (schema: Schema | undefined) => {
      const name = schema?.$ref?.replace('#/components/schemas/', '');
      if (!name) throw new Error(`webhook ${type}: its body is not a oneOf of two component references`);
      return name;
    };
    return { type, snakeCase: component(snake), camelCase: component(camel) };
  });
}

/** The event types of the document's webhooks, mapped to their payloads in both spellings. */
function renderWebhookEvents(document: OpenApiDocument): string[] {
  const events = webhookEventsOf(document);
  const map = (spelling: 'snakeCase' | 'camelCase') =>
    events.map((event) => `${literal(event.type)}: ${event[spelling]};`).join('\n');
  return [
    '/** Every event type a subscription can receive (the document’s `webhooks`). */',
    `export const WEBHOOK_EVENT_TYPES = [${events.map((e) => literal(e.type)).join(', ')}] as const;`,
    'export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];',
    '/** A subscription’s `payload_format`: the spelling of every field name in its payloads. */',
    "export type PayloadFormat = 'snake_case' | 'camel_case';",
    '/** Each event type’s payload in the snake_case spelling. */',
    `export interface WebhookEventsSnakeCase {\n${map('snakeCase')}\n}`,
    '/** Each event type’s payload in the camelCase spelling. */',
    `export interface WebhookEventsCamelCase {\n${map('camelCase')}\n}`,
    '/** A delivered event in a spelling: a union narrowed by `type`. */',
    "export type WebhookEvent<F extends PayloadFormat = 'snake_case'> = F extends 'camel_case'",
    '  ? WebhookEventsCamelCase[WebhookEventType]',
    '  : WebhookEventsSnakeCase[WebhookEventType];',
    '',
  ];
}

/** The operations of a document, in document order. */
export function operationsOf(
  document: OpenApiDocument,
): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((method) => item[method]).map((method) => ({
      method: method.toUpperCase(),
      path,
      operation: item[method] as Operation,
    })),
  );
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** A parameter name as a TypeScript argument: `delivery-id` becomes `deliveryId`. */
function argumentName(name: string): string {
  const camel = name.replace(/[^A-Za-z0-9_$]+([A-Za-z0-9_$])/g, (_, c: string) => c.toUpperCase());
  return /^[A-Za-z_$]/.test(camel) ? camel : `_${camel}`;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `'${name}'`;
}

function doc(text: string | undefined): string {
  if (!text) return '';
  return `/** ${text.replace(/\*\//g, '*\\/').replace(/\n+/g, ' ')} */\n`;
}

function literal(value: unknown): string {
  return typeof value === 'string'
    ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
    : JSON.stringify(value);
}

function union(types: string[]): string {
  const distinct = [...new Set(types)];
  return distinct.length === 0 ? 'never' : distinct.join(' | ');
}

function isListPage(schema: Schema): boolean {
  const properties = schema.properties ?? {};
  return (
    properties.object?.enum?.length === 1 &&
    properties.object.enum[0] === 'list' &&
    properties.data?.type === 'array' &&
    'has_more' in properties &&
    'next_cursor' in properties
  );
}

/** A TypeScript type for a schema. `dates` widens date-time strings to `string | Date` (query input). */
function tsType(schema: Schema | undefined, dates = false): string {
  if (!schema) return 'unknown';
  if (schema.$ref) return schema.$ref.replace(/^#\/components\/schemas\//, '');
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum) return union(schema.enum.map(literal));
  if (schema.oneOf) return union(schema.oneOf.map((s) => tsType(s, dates)));
  if (schema.anyOf) return union(schema.anyOf.map((s) => tsType(s, dates)));
  if (schema.allOf) return schema.allOf.map((s) => tsType(s, dates)).join(' & ');
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => tsType({ ...schema, type }, dates)));
  switch (schema.type) {
    case 'string':
      return dates && schema.format === 'date-time' ? 'string | Date' : 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${tsType(schema.items)}>`;
    case 'object':
      return objectType(schema, dates);
    case undefined:
      return schema.properties ? objectType(schema, dates) : 'unknown';
    default:
      throw new Error(`unsupported schema type ${String(schema.type)}`);
  }
}

function objectType(schema: Schema, dates = false): string {
  if (isListPage(schema)) return `List<${tsType(schema.properties?.data?.items)}>`;
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const extra = schema.additionalProperties;
  if (properties.length === 0) {
    if (extra === false) return 'Record<string, never>';
    return `Record<string, ${typeof extra === 'object' ? tsType(extra, dates) : 'unknown'}>`;
  }
  const members = properties.map(([name, property]) => {
    const optional = required.has(name) ? '' : '?';
    return `${doc(property.description)}${propertyKey(name)}${optional}: ${tsType(property, dates)};`;
  });
  if (extra !== undefined && extra !== false) {
    // An index signature must admit every named member too.
    const named = properties.map(([name, property]) =>
      required.has(name) ? tsType(property, dates) : `${tsType(property, dates)} | undefined`,
    );
    members.push(`[key: string]: ${union([extra === true ? 'unknown' : tsType(extra, dates), ...named])};`);
  }
  return `{\n${members.join('\n')}\n}`;
}

/** Whether a schema renders as one object literal (an interface), not a union or a reference. */
function isObjectLiteral(schema: Schema, type: string): boolean {
  const plain = !schema.$ref && !schema.enum && !schema.oneOf && !schema.anyOf && !schema.allOf;
  return plain && !Array.isArray(schema.type) && type.startsWith('{') && type.endsWith('}');
}

function declaration(name: string, schema: Schema, dates = false): string {
  const type = tsType(schema, dates);
  const comment = doc(schema.description);
  if (isObjectLiteral(schema, type)) return `${comment}export interface ${name} ${type}\n`;
  return `${comment}export type ${name} = ${type};\n`;
}

function jsonSchemaOf(content: MediaTypes | undefined): Schema | undefined {
  return content?.['application/json']?.schema;
}

/**
 * Whether a body must name some field: its schema requires one, through a component reference too, and a
 * `oneOf` only when every form does.
 */
function requiresFields(document: OpenApiDocument, schema: Schema | undefined): boolean {
  if (schema === undefined) return false;
  if (schema.$ref) {
    return requiresFields(document, document.components?.schemas?.[tsType(schema)]);
  }
  if (schema.oneOf) return schema.oneOf.every((form) => requiresFields(document, form));
  return (schema.required ?? []).length > 0;
}

/** The source of generated.ts, before formatting. */
export function renderGenerated(document: OpenApiDocument): string {
  const out: string[] = [
    `// Generated by packages/sdk/scripts/generate.ts from openapi.json (${document.info.title} ${document.info.version}).`,
    '// Do not edit: change the API, regenerate openapi.json, then run `npm run generate -w @mkoba/sdk`.',
    "import type { List, OperationSpec, RequestOptions } from './operation.ts';",
    '',
    '/** The API version these types describe. */',
    `export const API_VERSION = ${literal(document.info.version)};`,
    '',
  ];
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    out.push(declaration(name, schema));
  }

  const table: string[] = [];
  const signatures: string[] = [];
  const seen = new Set<string>();
  for (const { method, path, operation } of operationsOf(document)) {
    const id = operation.operationId;
    if (!id) throw new Error(`${method} ${path} has no operationId`);
    if (seen.has(id)) throw new Error(`operationId ${id} is used twice`);
    seen.add(id);
    const name = pascal(id);
    const parameters = operation.parameters ?? [];
    for (const parameter of parameters) {
      if (parameter.in === 'cookie') throw new Error(`${id}: cookie parameters are not supported`);
      if (parameter.in === 'header' && !HANDLED_HEADERS.has(parameter.name.toLowerCase())) {
        throw new Error(`${id}: header parameter ${parameter.name} is not supported`);
      }
    }
    const pathParams = parameters.filter((p) => p.in === 'path');
    const queryParams = parameters.filter((p) => p.in === 'query');
    const args: string[] = pathParams.map((p) => `${argumentName(p.name)}: string`);

    let body: 'none' | 'optional' | 'required' = 'none';
    const bodySchema = jsonSchemaOf(operation.requestBody?.content);
    if (operation.requestBody) {
      if (!bodySchema) throw new Error(`${id}: only application/json request bodies are supported`);
      body = operation.requestBody.required && requiresFields(document, bodySchema) ? 'required' : 'optional';
      const bodyType = bodySchema.$ref ? tsType(bodySchema) : `${name}Request`;
      if (!bodySchema.$ref) out.push(declaration(bodyType, bodySchema));
      args.push(`body${body === 'required' ? '' : '?'}: ${bodyType}`);
    }

    if (queryParams.length > 0) {
      const querySchema: Schema = {
        type: 'object',
        properties: Object.fromEntries(
          queryParams.map((p) => [
            p.name,
            { ...p.schema, description: p.description ?? p.schema?.description },
          ]),
        ),
        required: queryParams.filter((p) => p.required).map((p) => p.name),
      };
      out.push(declaration(`${name}Query`, querySchema, true));
      args.push(`query${queryParams.some((p) => p.required) ? '' : '?'}: ${name}Query`);
    }
    args.push('options?: RequestOptions');

    const success = Object.entries(operation.responses)
      .filter(([status]) => /^2\d\d$/.test(status))
      .sort(([a], [b]) => a.localeCompare(b))[0];
    if (!success) throw new Error(`${id} has no 2xx response`);
    const content = success[1].content ?? {};
    let response: 'json' | 'text' = 'json';
    let result = 'void';
    const successSchema = jsonSchemaOf(content);
    if (successSchema) {
      result = tsType(successSchema);
      // Inline shapes get a name; references and list pages are used as they are.
      if (result.includes('{')) {
        out.push(declaration(`${name}Response`, successSchema));
        result = `${name}Response`;
      }
    } else if (Object.keys(content).some((type) => type.startsWith('text/'))) {
      response = 'text';
      result = 'string';
    }

    const summary = operation.summary ? `${operation.summary}: ` : '';
    signatures.push(
      `${doc(`${summary}\`${method} ${path}\`.`)}${id}(${args.join(', ')}): Promise<${result}>;`,
    );
    const pathNames = pathParams.map((p) => literal(p.name)).join(', ');
    table.push(
      `${id}: { method: '${method}', path: ${literal(path)}, pathParams: [${pathNames}], body: '${body}', query: ${queryParams.length > 0}, response: '${response}' },`,
    );
  }

  out.push(...renderWebhookEvents(document));
  out.push(
    '/** One method per operation of openapi.json, named by its operationId. */',
    `export interface MkobaOperations {\n${signatures.join('\n')}\n}`,
    '',
    '/** How to call each operation. */',
    `export const OPERATIONS = {\n${table.join('\n')}\n} as const satisfies Record<keyof MkobaOperations, OperationSpec>;`,
    '',
  );
  return out.join('\n');
}

/** Formats TypeScript as the repository's Biome does; fails on a syntax error in the generated source. */
export function formatSource(source: string): string {
  const result = spawnSync(BIOME_BIN, ['format', `--stdin-file-path=${GENERATED_PATH_IN_REPO}`], {
    cwd: REPO_ROOT,
    input: source,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`biome failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

export function readDocument(file = OPENAPI_FILE): OpenApiDocument {
  return JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
}

export function generate(document = readDocument()): string {
  return formatSource(renderGenerated(document));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const source = generate();
  if (process.argv.includes('--check')) {
    if (readFileSync(GENERATED_FILE, 'utf8') !== source) {
      console.error(`${GENERATED_PATH_IN_REPO} is stale: run \`npm run generate -w @mkoba/sdk\`.`);
      process.exit(1);
    }
    console.log(`${GENERATED_PATH_IN_REPO} is up to date.`);
  } else {
    writeFileSync(GENERATED_FILE, source);
    console.log(`wrote ${GENERATED_PATH_IN_REPO}`);
  }
}
