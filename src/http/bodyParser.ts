/**
 * Request bodies: JSON only, in UTF-8, optionally gzip/deflate/br-coded, read losslessly. Handlers get
 * plain values (Ajv validates them as before) while every number's exact source text stays retrievable
 * through `numberSourceOf`. Strings PostgreSQL cannot store are refused here, in one place, for bodies,
 * query strings and path parameters alike.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { parse } from 'lossless-json';
import { REQUEST_BODY_BYTES_MAX, REQUEST_BODY_DEPTH_MAX } from '../config.ts';
import { AppError, validationError } from '../domain/errors.ts';
import { recordNumberSource } from '../domain/jsonNumbers.ts';

type Decoder = (body: Buffer, options: { maxOutputLength: number }) => Buffer;

/** Content codings we decode, by their (case-insensitive) name; `identity` means none. */
const CONTENT_DECODERS: Record<string, Decoder> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};
/** Sent with a 415 for a coding we do not decode, as RFC 9110 section 15.5.16 suggests. */
export const ACCEPTED_CONTENT_ENCODINGS = 'gzip, deflate, br';

function unsupportedEncoding(detail: string): AppError {
  return new AppError({
    status: 415,
    code: 'unsupported_media_type',
    title: 'Unsupported content encoding',
    detail: `${detail} Send the body plain or coded with one of: ${ACCEPTED_CONTENT_ENCODINGS}.`,
    param: 'Content-Encoding',
  });
}

function malformed(detail: string): AppError {
  return new AppError({ status: 400, code: 'malformed_json', title: 'Malformed JSON', detail });
}

/** The one coding to undo ('identity' for none), or a 415 for an unknown coding or a stack of them. */
export function contentCodingOf(header: string | undefined): string {
  const codings = (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length > 1) throw unsupportedEncoding(`Content-Encoding '${header}' stacks codings.`);
  const coding = codings[0] ?? 'identity';
  if (coding !== 'identity' && !Object.hasOwn(CONTENT_DECODERS, coding)) {
    throw unsupportedEncoding(`Content-Encoding '${coding}' is not supported.`);
  }
  return coding;
}

/** Undoes the coding with the decoded size capped at the body limit: a decompression bomb stops there. */
export function decodeContent(body: Buffer, coding: string, bytesMax = REQUEST_BODY_BYTES_MAX): Buffer {
  const decoder = CONTENT_DECODERS[coding];
  if (!decoder || body.length === 0) return body;
  try {
    return decoder(body, { maxOutputLength: bytesMax });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new AppError({
        status: 413,
        code: 'payload_too_large',
        title: 'Payload too large',
        detail: `The request body, decoded, is larger than this route accepts (${bytesMax} bytes).`,
      });
    }
    throw malformed(`The body is not valid ${coding} data.`);
  }
}

/** Stands in for a number while parsing, so its text survives until it is recorded. */
class NumberToken {
  constructor(readonly text: string) {}
}
/** What the parser stores for a key given twice with different values, so the walk can name the key. */
const DUPLICATE_KEY = Object.freeze({ duplicate: true });
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How deeply the JSON text nests objects and arrays, counted in one pass over its characters (strings
 * skipped), without recursion; stops counting once past `limit`. Malformed text is left to the parser.
 */
export function jsonNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

/** A body nesting objects and arrays deeper than `REQUEST_BODY_DEPTH_MAX` is refused before it is parsed. */
function checkNesting(text: string): void {
  if (jsonNestingDepth(text, REQUEST_BODY_DEPTH_MAX) <= REQUEST_BODY_DEPTH_MAX) return;
  throw validationError(
    'body',
    `The request body nests objects and arrays more than ${REQUEST_BODY_DEPTH_MAX} levels deep.`,
    'body_too_deep',
  );
}

/**
 * Parses a JSON body. Numbers become plain JS numbers with their source text recorded; a key given twice
 * with different values, `__proto__` and `constructor.prototype` are refused by name.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0)
    throw malformed("The body is empty but 'Content-Type' says JSON: send a JSON object.");
  let text: string;
  try {
    text = utf8.decode(body); // also drops a leading byte-order mark
  } catch {
    throw malformed('The body is not valid UTF-8.');
  }
  checkNesting(text);
  let parsed: unknown;
  try {
    parsed = parse(text, null, {
      parseNumber: (source) => new NumberToken(source),
      onDuplicateKey: () => DUPLICATE_KEY,
    });
  } catch (error) {
    if (error instanceof SyntaxError) throw malformed(`The request body is not valid JSON: ${error.message}`);
    if (error instanceof RangeError) throw malformed('The request body is nested too deeply.');
    throw error;
  }
  return materialise(parsed);
}

/** Replaces number tokens with numbers (recording their text) and checks keys, without recursion. */
function materialise(root: unknown): unknown {
  const holder: Record<string, unknown> = { body: root };
  const stack: { container: Record<string, unknown>; path: string }[] = [{ container: holder, path: '' }];
  while (stack.length > 0) {
    const { container, path } = stack.pop() as { container: Record<string, unknown>; path: string };
    const isArray = Array.isArray(container);
    for (const key of Object.keys(container)) {
      const value = container[key];
      const child = container === holder ? '' : path ? `${path}.${key}` : key;
      if (value === DUPLICATE_KEY) {
        throw validationError(
          child,
          `${child} is given more than once, with different values.`,
          'duplicate_key',
        );
      }
      if (!isArray && key === '__proto__') {
        throw validationError(child, `${child}: the key '__proto__' is not allowed.`, 'invalid_key');
      }
      if (value instanceof NumberToken) {
        container[key] = Number(value.text);
        recordNumberSource(container, key, value.text);
      } else if (value !== null && typeof value === 'object') {
        if (!isArray && key === 'constructor' && !Array.isArray(value) && Object.hasOwn(value, 'prototype')) {
          throw validationError(child, `${child}: a 'prototype' key is not allowed here.`, 'invalid_key');
        }
        stack.push({ container: value as Record<string, unknown>, path: child });
      }
    }
  }
  return holder.body;
}

/** NUL (PostgreSQL text cannot hold it) and UTF-16 surrogates without their pair (nor can UTF-8). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is one of the characters looked for.
const UNSTORABLE_CHARACTER = /[\u0000\p{Surrogate}]/u;

/**
 * The dotted path of the first string or key holding a character PostgreSQL cannot store, '' for the
 * value itself, undefined if none. A bad key is reported at the object that holds it.
 */
export function findUnstorableCharacter(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: string };
    if (typeof current === 'string') {
      if (UNSTORABLE_CHARACTER.test(current)) return path;
    } else if (Array.isArray(current)) {
      for (const [i, item] of current.entries())
        stack.push({ value: item, path: path ? `${path}.${i}` : String(i) });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (UNSTORABLE_CHARACTER.test(key)) return path;
        stack.push({ value: item, path: path ? `${path}.${key}` : key });
      }
    }
  }
  return undefined;
}

/** A body kept as sent: its text, with bytes that are not UTF-8 replaced (stored text must be valid). */
function rawText(body: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(body);
}

/** The 415 for a body type a route does not take: every route takes JSON. */
function unsupportedMediaType(): AppError {
  return new AppError({
    status: 415,
    code: 'unsupported_media_type',
    title: 'Unsupported media type',
    detail: 'This route takes JSON (Content-Type: application/json).',
    param: 'Content-Type',
  });
}

/** Replaces Fastify's body parsers with ours and refuses unstorable characters before validation. */
export function registerBodyParsing(app: FastifyInstance): void {
  registerContentTypeParsers(app);
  refuseUnknownCodings(app);
  refuseUnstorableCharacters(app);
}

function registerContentTypeParsers(app: FastifyInstance): void {
  // JSON only: a text/plain body must be a 415, not a string that fails validation as a 400.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    const coding = contentCodingOf(request.headers['content-encoding']);
    const decoded = decodeContent(body, coding, request.routeOptions.bodyLimit);
    done(null, request.routeOptions.config.rawBody === true ? rawText(decoded) : parseJsonBody(decoded));
  });
  // Any other type is a 415, except on a route that keeps its body as sent (a partner callback).
  addTextParserWhere(app, '*', 'rawBody');
  // CSV only where a route takes an upload (a payment batch); anywhere else it is a 415 like any non-JSON.
  addTextParserWhere(app, 'text/csv', 'acceptsCsv');
}

/**
 * A parser of `contentType` that gives the body as text, decoded, on the routes whose config sets `accepts`;
 * on any other route the type is a 415.
 */
function addTextParserWhere(
  app: FastifyInstance,
  contentType: string,
  accepts: 'rawBody' | 'acceptsCsv',
): void {
  app.addContentTypeParser(contentType, { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (request.routeOptions.config[accepts] !== true) {
      done(unsupportedMediaType());
      return;
    }
    const coding = contentCodingOf(request.headers['content-encoding']);
    done(null, rawText(decodeContent(body, coding, request.routeOptions.bodyLimit)));
  });
}

/** A coding we cannot undo is refused before the body is read, with the codings we can. */
function refuseUnknownCodings(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    const { 'content-length': length, 'transfer-encoding': chunked } = request.headers;
    if (chunked === undefined && (length === undefined || length === '0')) return payload;
    try {
      contentCodingOf(request.headers['content-encoding']);
    } catch (error) {
      reply.header('Accept-Encoding', ACCEPTED_CONTENT_ENCODINGS);
      throw error;
    }
    return payload;
  });
}

/** Strings PostgreSQL cannot store, in the body, the query, the path or the Idempotency-Key: a 400. */
function refuseUnstorableCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [where, value] of [
      ['body', request.body],
      ['query', request.query],
      ['path', request.params],
      ['Idempotency-Key', request.headers['idempotency-key']],
    ] as const) {
      const found = findUnstorableCharacter(value);
      if (found !== undefined) {
        const param = found || where;
        throw validationError(
          param,
          `${param} contains a character that cannot be stored (U+0000 or an unpaired UTF-16 surrogate).`,
          'invalid_character',
        );
      }
    }
  });
}
