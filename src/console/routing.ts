/**
 * What the console's page modules (`pages/`) are given and use: the routes they register with, a form's
 * fields, the session and pre-session cookies, and a recorded write's outcome. Apart from `plugin.ts`, so
 * the plugin imports the pages and no page imports the plugin.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleIdentity } from '../app/console/session.ts';
import type { Deps } from '../app/deps.ts';
import type { IdempotentOutcome, WriteResult } from '../app/idempotency.ts';
import type { Scope } from '../domain/access.ts';
import { CONSOLE_SESSION_COOKIE_PLAIN, CONSOLE_SESSION_COOKIE_SECURE } from '../domain/console.ts';
import { AppError, validationError } from '../domain/errors.ts';
import { type IdPrefix, idPattern } from '../domain/ids.ts';
import type { AuthFailureLimiter } from '../http/rateLimit.ts';
import type { Queryable } from '../store/store.ts';
import type { Renderable } from './html.ts';
import { CONSOLE_PREFIX } from './layout.ts';

/** Rows a list page shows. */
export const CONSOLE_LIST_ROWS = 50;

/** The pre-session cookie that keys the CSRF token of the sign-in forms (login CSRF). */
const PRESESSION_COOKIE_SECURE = '__Host-mkoba_console_pre';
const PRESESSION_COOKIE_PLAIN = 'mkoba_console_pre';

export type FormBody = Record<string, string | string[] | undefined>;

export type Handler = (
  request: FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, string> }>,
  reply: FastifyReply,
  identity: ConsoleIdentity,
) => Promise<unknown>;

/** What each page module registers its routes with. */
export interface ConsoleRoutes {
  deps: Deps;
  limiter: AuthFailureLimiter | undefined;
  get(path: string, scope: Scope, handler: Handler): void;
  post(path: string, scope: Scope, handler: Handler): void;
  /** Routes reachable without a session (sign-in). */
  publicRoute(
    method: 'GET' | 'POST',
    path: string,
    handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  ): void;
  render(
    reply: FastifyReply,
    options: {
      status?: number;
      title: string;
      identity?: ConsoleIdentity | undefined;
      section?: string;
      notice?: string | undefined;
      error?: string | undefined;
      body: Renderable;
    },
  ): FastifyReply;
  /** Runs a write once per rendered form, in one transaction; a replay answers with what the first did. */
  write(
    request: FastifyRequest,
    identity: ConsoleIdentity,
    effect: (tx: Queryable) => Promise<WriteResult>,
  ): Promise<IdempotentOutcome>;
  /** A fresh key for a form (its `_form` field). */
  formKey(): string;
}

/** Plain HTTP to a loopback host: the one case where the session cookie cannot be `Secure`. */
export function isPlainLocalhost(request: FastifyRequest): boolean {
  if (request.protocol !== 'http') return false;
  const host = request.hostname
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return (
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

export function sessionCookieName(request: FastifyRequest): string {
  return isPlainLocalhost(request) ? CONSOLE_SESSION_COOKIE_PLAIN : CONSOLE_SESSION_COOKIE_SECURE;
}

export function presessionCookieName(request: FastifyRequest): string {
  return isPlainLocalhost(request) ? PRESESSION_COOKIE_PLAIN : PRESESSION_COOKIE_SECURE;
}

export function cookieOptions(request: FastifyRequest) {
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure: !isPlainLocalhost(request) };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(sessionCookieName(request), token, cookieOptions(request));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName(request), cookieOptions(request));
}

/** The pre-session token (set on first sight), whose HMAC is the CSRF token of the sign-in forms. */
export function presessionToken(deps: Deps, request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[presessionCookieName(request)];
  if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = Buffer.from(deps.randomBytes(32)).toString('base64url');
  reply.setCookie(presessionCookieName(request), token, cookieOptions(request));
  return token;
}

/** Only console paths: a `next` parameter never sends the member elsewhere. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' &&
    /^\/console(\/[A-Za-z0-9_\-/]*)?(\?[^\s]*)?$/.test(value) &&
    !value.startsWith('//')
    ? value
    : CONSOLE_PREFIX;
}

/** A single text field of a form (the first, when sent twice). */
export function field(body: unknown, name: string): string | undefined {
  const value = (body as FormBody | undefined)?.[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined ? undefined : text;
}

/** The value when it is one of `values` (a choice from a query or a form), else undefined. */
export function oneOf<const Value extends string>(
  values: readonly Value[],
  value: string | undefined,
): Value | undefined {
  return (values as readonly string[]).includes(value ?? '') ? (value as Value) : undefined;
}

/** A form's field that must be one of `values`: a 400 naming them when it is not. */
export function chosenField<const Value extends string>(
  body: unknown,
  name: string,
  values: readonly Value[],
): Value {
  const value = oneOf(values, field(body, name));
  if (value === undefined) {
    throw validationError(name, `Choose one of ${values.join(', ')}.`, 'invalid_value');
  }
  return value;
}

/** A note or comment as the API takes it: optional, trimmed, at most `max` characters. */
export function optionalNote(value: string | undefined, param: string, max: number): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if ([...text].length > max)
    throw validationError(param, `${param} must be at most ${max} characters.`, 'out_of_range');
  return text;
}

/** The value when it is an id of this kind, else undefined (a page's `after` cursor, a form's id field). */
export function idOfKind(value: string | undefined, prefix: IdPrefix): string | undefined {
  return value && new RegExp(idPattern(prefix)).test(value) ? value : undefined;
}

/**
 * Runs a form's write through `routes.write` (once per rendered form, in one transaction), recorded with the
 * status the API answers with, and returns its body; a recorded refusal is thrown (see settle).
 */
export async function recordWrite(
  routes: ConsoleRoutes,
  request: FastifyRequest,
  identity: ConsoleIdentity,
  status: number,
  effect: (tx: Queryable) => Promise<unknown>,
): Promise<unknown> {
  return settle(await routes.write(request, identity, async (tx) => ({ status, body: await effect(tx) })));
}

/**
 * A form's write of one app function for the signed-in organization, as the API's routes run it:
 * `write(tx, deps, organizationId, ...args)`, recorded (`recordWrite`) with `status` and its result as
 * `present` shows it.
 */
export async function recordOrganizationWrite<Args extends unknown[], Result>(
  routes: ConsoleRoutes,
  request: FastifyRequest,
  identity: ConsoleIdentity,
  status: number,
  write: (tx: Queryable, deps: Deps, organizationId: string, ...args: Args) => Promise<Result>,
  present: (result: Result) => unknown,
  args: Args,
): Promise<unknown> {
  return recordWrite(routes, request, identity, status, async (tx) =>
    present(await write(tx, routes.deps, identity.organizationId, ...args)),
  );
}

/** Turns a recorded failure into the error it was, so the error page shows it (a replay shows it again). */
export function settle(outcome: IdempotentOutcome): unknown {
  const body = JSON.parse(outcome.text) as { detail?: string; title?: string; code?: string };
  if (outcome.status >= 400) {
    throw new AppError({
      status: outcome.status,
      code: (body.code ?? 'validation_error') as AppError['code'],
      title: body.title ?? 'Refused',
      detail: body.detail ?? 'Refused.',
    });
  }
  return body;
}
