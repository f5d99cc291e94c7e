/** Sign-in (password or one-time link) and sign-out. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  hasPassword,
  loadSession,
  type SignedIn,
  signInWithLink,
  signInWithPassword,
  signOut,
} from '../../app/console/session.ts';
import {
  CONSOLE_PASSWORD_CHARS_MAX,
  CONSOLE_SESSION_IDLE_MINUTES,
  CONSOLE_SESSION_LIFETIME_HOURS,
  csrfTokenOf,
} from '../../domain/console.ts';
import { AppError } from '../../domain/errors.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX } from '../layout.ts';
import { noticeOf, redirectWithNotice, withNotice } from '../notices.ts';
import {
  type ConsoleRoutes,
  clearSessionCookie,
  field,
  type Handler,
  presessionToken,
  safeNext,
  sessionCookieName,
  setSessionCookie,
} from '../routing.ts';

/** A route reachable without a session. */
type PublicHandler = Parameters<ConsoleRoutes['publicRoute']>[2];

const EXPIRED_SENTENCES: Record<string, string> = {
  idle: `Your session ended after ${CONSOLE_SESSION_IDLE_MINUTES} minutes without activity. Sign in again.`,
  lifetime: `Your session reached its ${CONSOLE_SESSION_LIFETIME_HOURS}-hour limit. Sign in again.`,
  member_removed: 'Your membership was removed; your session has ended.',
};

async function refuseIfLimited(routes: ConsoleRoutes, request: FastifyRequest): Promise<void> {
  const verdict = await routes.limiter?.check(request.ip);
  if (verdict && !verdict.allowed) {
    throw new AppError({
      status: 429,
      code: 'rate_limited',
      title: 'Too many attempts',
      detail: `Too many failed sign-ins from this address. Try again in ${verdict.retryAfterSeconds} s.`,
      retryAfterSeconds: verdict.retryAfterSeconds,
    });
  }
}

function signInForm(
  routes: ConsoleRoutes,
  request: FastifyRequest,
  reply: FastifyReply,
  state: {
    status?: number;
    email?: string;
    organization?: string;
    error?: string;
    notice?: string;
    next: string;
  },
) {
  const csrf = csrfTokenOf(presessionToken(routes.deps, request, reply));
  return routes.render(reply, {
    status: state.status,
    title: 'Sign in',
    error: state.error,
    notice: state.notice,
    body: html`<form method="post" action="${CONSOLE_PREFIX}/sign-in" class="stack narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="next" value="${state.next}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${state.email ?? ''}" autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${CONSOLE_PASSWORD_CHARS_MAX}">
  <label for="organization">Organization <span class="hint">(only if your email belongs to several)</span></label>
  <input id="organization" name="organization" type="text" value="${state.organization ?? ''}">
  <button type="submit">Sign in</button>
</form>
<p class="hint">No password yet? Ask an operator for a one-time sign-in link:
<code>mkoba console-link --member you@example.com</code>. Sessions end after ${CONSOLE_SESSION_IDLE_MINUTES} minutes without activity.</p>`,
  });
}

async function startSessionAndGo(
  request: FastifyRequest,
  reply: FastifyReply,
  signedIn: SignedIn,
  next: string,
) {
  setSessionCookie(request, reply, signedIn.token);
  return reply.redirect(next, 303);
}

/** GET /sign-in: the form, or (already signed in) straight on to where the member was going. */
function signInPage(routes: ConsoleRoutes): PublicHandler {
  return async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const next = safeNext(query.next);
    const current = await loadSession(routes.deps, request.cookies[sessionCookieName(request)]);
    if (current.state === 'live') return reply.redirect(next, 303);
    const expired = query.expired === undefined ? undefined : EXPIRED_SENTENCES[query.expired];
    return signInForm(routes, request, reply, {
      next,
      notice: noticeOf(query),
      error: expired,
    });
  };
}

/** POST /sign-in: email and password; a failure is charged to the address's failed-authentication bucket. */
function passwordSignIn(routes: ConsoleRoutes): PublicHandler {
  return async (request, reply) => {
    await refuseIfLimited(routes, request);
    const email = field(request.body, 'email') ?? '';
    const organization = field(request.body, 'organization');
    const next = safeNext(field(request.body, 'next'));
    const signedIn = await signInWithPassword(routes.deps, {
      email,
      password: field(request.body, 'password') ?? '',
      organization,
    });
    if (!signedIn) {
      await routes.limiter?.charge(request.ip);
      return signInForm(routes, request, reply, {
        status: 401,
        email,
        organization,
        next,
        error: 'The email or password is wrong.',
      });
    }
    return startSessionAndGo(request, reply, signedIn, next);
  };
}

/** GET /sign-in/link: the page whose button uses the link. */
function linkPage(routes: ConsoleRoutes): PublicHandler {
  return async (request, reply) => {
    const token = (request.query as Record<string, string | undefined>).token ?? '';
    const csrf = csrfTokenOf(presessionToken(routes.deps, request, reply));
    // Using the link is a POST: a mail scanner or a link preview that fetches the URL does not spend it.
    return routes.render(reply, {
      title: 'Sign in with a link',
      body: html`<form method="post" action="${CONSOLE_PREFIX}/sign-in/link" class="stack narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="token" value="${token}">
  <p>This one-time link signs you in to the Mkoba console. It works once and expires soon after it was made.</p>
  <button type="submit">Continue</button>
</form>`,
    });
  };
}

/** POST /sign-in/link: spends the link; a member without a password is sent to set one. */
function linkSignIn(routes: ConsoleRoutes): PublicHandler {
  return async (request, reply) => {
    await refuseIfLimited(routes, request);
    const signedIn = await signInWithLink(routes.deps, field(request.body, 'token') ?? '');
    if (!signedIn) {
      await routes.limiter?.charge(request.ip);
      return routes.render(reply, {
        status: 401,
        title: 'Sign in with a link',
        error: 'This sign-in link was already used, has expired, or is not valid. Ask for a new one.',
        body: html`<p><code>mkoba console-link --member you@example.com</code> prints a new link.
          Or <a href="${CONSOLE_PREFIX}/sign-in">sign in with your password</a>.</p>`,
      });
    }
    const next = (await hasPassword(routes.deps, signedIn.identity.member.id))
      ? CONSOLE_PREFIX
      : withNotice(`${CONSOLE_PREFIX}/account`, 'link_signed_in');
    return startSessionAndGo(request, reply, signedIn, next);
  };
}

/** POST /sign-out: ends the session and clears its cookie. */
function endSession(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    await signOut(routes.deps, identity);
    clearSessionCookie(request, reply);
    return redirectWithNotice(reply, `${CONSOLE_PREFIX}/sign-in`, 'signed_out');
  };
}

export function signInPages(routes: ConsoleRoutes): void {
  routes.publicRoute('GET', '/sign-in', signInPage(routes));
  routes.publicRoute('POST', '/sign-in', passwordSignIn(routes));
  routes.publicRoute('GET', '/sign-in/link', linkPage(routes));
  routes.publicRoute('POST', '/sign-in/link', linkSignIn(routes));
  routes.post('/sign-out', 'read', endSession(routes));
}
