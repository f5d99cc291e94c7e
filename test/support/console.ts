/**
 * A browser-like client of the operator console over app.inject: it keeps cookies, reads each page's CSRF
 * token and form key, and posts URL-encoded forms with the console's own Origin.
 */
import type { LightMyRequestResponse } from 'fastify';
import { runAdminCommand } from '../../src/app/admin.ts';
import type { TestApp } from './harness.ts';

/** The Host the tests send: plain-http localhost, where the session cookie is not `Secure`. */
export const CONSOLE_TEST_HOST = '127.0.0.1:8080';

export interface ConsolePage extends LightMyRequestResponse {
  /** The first CSRF token on the page. */
  csrf: string | undefined;
  /** The first form key on the page. */
  formKey: string | undefined;
}

export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly t: TestApp,
    readonly host = CONSOLE_TEST_HOST,
  ) {}

  private remember(response: LightMyRequestResponse): void {
    for (const c of response.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const cleared =
        c.value === '' || c.maxAge === 0 || (c.expires !== undefined && c.expires.getTime() < Date.now());
      if (cleared) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private page(response: LightMyRequestResponse): ConsolePage {
    this.remember(response);
    const body = response.body;
    return Object.assign(response, {
      csrf: /name="_csrf" value="([^"]+)"/.exec(body)?.[1],
      formKey: /name="_form" value="([^"]+)"/.exec(body)?.[1],
    });
  }

  async get(url: string): Promise<ConsolePage> {
    return this.page(
      await this.t.app.inject({
        method: 'GET',
        url,
        headers: { host: this.host, cookie: this.cookieHeader() },
      }),
    );
  }

  /** Posts a form; `csrf` defaults to the token of `from` (a page fetched first). */
  async post(
    url: string,
    form: Record<string, string | string[]>,
    options: { origin?: string | null } = {},
  ): Promise<ConsolePage> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(form))
      for (const value of Array.isArray(v) ? v : [v]) params.append(k, value);
    const headers: Record<string, string> = {
      host: this.host,
      cookie: this.cookieHeader(),
      'content-type': 'application/x-www-form-urlencoded',
    };
    const origin = options.origin === undefined ? `http://${this.host}` : options.origin;
    if (origin !== null) headers.origin = origin;
    return this.page(await this.t.app.inject({ method: 'POST', url, headers, payload: params.toString() }));
  }

  /** GETs `page` for its CSRF token and form key, then posts the form with them. */
  async submit(page: string, action: string, form: Record<string, string | string[]>): Promise<ConsolePage> {
    const source = await this.get(page);
    if (!source.csrf)
      throw new Error(`no CSRF token on ${page}: ${source.statusCode} ${source.body.slice(0, 300)}`);
    return this.post(action, {
      _csrf: source.csrf,
      ...(source.formKey ? { _form: source.formKey } : {}),
      ...form,
    });
  }
}

/** A one-time sign-in link's token for the member (as `mkoba console-link` makes it). */
export async function signInLinkToken(t: TestApp, organization: string, email: string): Promise<string> {
  const result = await runAdminCommand(t.deps, { name: 'console.link', organization, member: email });
  if (result.name !== 'console.link') throw new Error('no link');
  return result.token;
}

/** Uses a link as a browser does: open it, then press Continue. */
export async function useLink(client: ConsoleClient, token: string): Promise<ConsolePage> {
  const page = await client.get(`/console/sign-in/link?token=${token}`);
  return client.post('/console/sign-in/link', { _csrf: page.csrf ?? '', token });
}

/** A signed-in console client for the member. */
export async function signedIn(t: TestApp, organization: string, email: string): Promise<ConsoleClient> {
  const client = new ConsoleClient(t);
  const response = await useLink(client, await signInLinkToken(t, organization, email));
  if (response.statusCode !== 303)
    throw new Error(`sign-in failed: ${response.statusCode} ${response.body.slice(0, 300)}`);
  return client;
}
