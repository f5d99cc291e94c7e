/**
 * Webhooks: subscriptions, each with its delivery log (every attempt with the receiver's response body),
 * and the operator's actions: redeliver an event, re-send everything since a time, rotate the secret
 * (shown once), and in the sandbox emit a test event. Reading needs `read`; acting needs `write`, as in the API.
 */
import type { FastifyReply } from 'fastify';
import type { ConsoleIdentity } from '../../app/console/session.ts';
import { subscriptionDeliveryLog } from '../../app/console/views.ts';
import { resourceMissing, validationError } from '../../domain/errors.ts';
import { EVENT_TYPES, type EventType } from '../../domain/events.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT } from '../../domain/webhooks.ts';
import {
  emitTestEvent,
  getSubscription,
  listSubscriptions,
  presentDelivery,
  presentSubscription,
  recoverSubscription,
  redeliverEvent,
  rotateSubscriptionSecret,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX,
} from '../../modules/webhooks/index.ts';
import { html, type SafeHtml } from '../html.ts';
import {
  CONSOLE_PREFIX,
  can,
  fields,
  idLink,
  roleNote,
  statusBadge,
  table,
  time,
  writeFormFields,
} from '../layout.ts';
import { noticeOf, redirectWithNotice } from '../notices.ts';
import {
  CONSOLE_LIST_ROWS,
  type ConsoleRoutes,
  field,
  type Handler,
  idOfKind,
  recordWrite,
  settle,
} from '../routing.ts';

const SECTION = `${CONSOLE_PREFIX}/webhooks`;
/** A response body is shown up to this many characters (the service stores at most a few KiB of it). */
const RESPONSE_BODY_SHOWN_CHARS_MAX = 2_000;

/** A `datetime-local` field (no zone) read as UTC, or a full RFC 3339 time. */
function sinceOf(value: string | undefined): Date {
  const text = value?.trim() ?? '';
  const date = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? new Date(`${text}Z`) : new Date(text);
  if (text === '' || Number.isNaN(date.getTime())) {
    throw validationError(
      'since',
      'since must be a date and time such as 2026-11-26T08:00 (UTC).',
      'invalid_format',
    );
  }
  return date;
}

type PresentedSubscription = ReturnType<typeof presentSubscription>;
type PresentedDelivery = ReturnType<typeof presentDelivery>;
/** A form posting to one of the subscription's actions: `body` holds its fields and button. */
type ActionForm = (action: string, body: SafeHtml) => SafeHtml;

/** GET /webhooks: the subscriptions. */
function subscriptionList(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const page = await listSubscriptions(routes.deps, identity.organizationId, { limit: CONSOLE_LIST_ROWS });
    return routes.render(reply, {
      title: 'Webhooks',
      identity,
      section: SECTION,
      notice: noticeOf(request.query),
      body: html`${table(
        'Webhook subscriptions',
        ['Subscription', 'URL', 'Events', 'Status', 'Created'],
        page.data
          .map((sub) => presentSubscription(sub))
          .map((s) => [
            idLink(SECTION, s.id),
            html`<code class="url">${s.url}</code>`,
            s.events.join(', '),
            html`${statusBadge(s.status)} ${s.disabled_reason ?? ''}`,
            time(s.created_at),
          ]),
        'No subscriptions. Create one with POST /v1/webhook-subscriptions.',
      )}`,
    });
  };
}

/** A secret just rotated in: shown once, with when the previous one stops working. */
interface RotatedSecret {
  secret: string;
  previousSecretExpiresAt: string | undefined;
}

/** The new signing secret, shown once. */
function rotatedSecretNotice(shownOnce: RotatedSecret) {
  return html`<div class="secret" role="status"><h2>New signing secret</h2>
  <p>Shown once: copy it now. The previous secret keeps working until ${shownOnce.previousSecretExpiresAt ?? 'now'}.</p>
  <p><code class="reveal" id="new-secret">${shownOnce.secret}</code></p></div>`;
}

/** The subscription's URL, events, status and payload format. */
function subscriptionFields(subscription: PresentedSubscription) {
  return fields([
    ['URL', html`<code class="url">${subscription.url}</code>`],
    ['Events', subscription.events.join(', ')],
    ['Status', html`${statusBadge(subscription.status)} ${subscription.disabled_reason ?? ''}`],
    ['Payload format', subscription.payload_format],
    ['Payload version', subscription.api_version],
    ['Description', subscription.description],
  ]);
}

/** A writer's actions: rotate the secret, re-send since a time, and (sandbox only) send a test event. */
function subscriptionActions(routes: ConsoleRoutes, form: ActionForm) {
  return html`<div class="action-grid">
  ${form(
    'rotate',
    html`<h3>Rotate the secret</h3>
    <label for="grace">Keep the old secret working for (hours)</label>
    <input id="grace" name="grace_period_hours" type="number" min="0" max="${WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX}" value="${WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT}">
    <button type="submit" data-confirm="Rotate the signing secret?">Rotate secret</button>`,
  )}
  ${form(
    'recover',
    html`<h3>Re-send since a time</h3>
    <label for="since">Events created at or after (UTC)</label>
    <input id="since" name="since" type="datetime-local" required>
    <button type="submit">Re-send</button>`,
  )}
  ${
    routes.deps.environment === 'sandbox'
      ? form(
          'test-event',
          html`<h3>Send a test event</h3>
    <label for="etype">Event type</label>
    <select id="etype" name="type">${EVENT_TYPES.map((t) => html`<option>${t}</option>`)}</select>
    <button type="submit">Send test event</button>`,
        )
      : ''
  }
</div>`;
}

/** A delivery's attempts, each with its HTTP status (or error), duration and the receiver's response body. */
function attemptList(d: PresentedDelivery) {
  return d.attempt_log.length === 0
    ? 'not attempted yet'
    : html`<ol class="attempts">${d.attempt_log.map(
        (
          a,
        ) => html`<li>${time(a.started_at)} · ${a.status_code === null ? (a.error_class ?? 'no answer') : `HTTP ${a.status_code}`} · ${a.duration_ms} ms
            ${a.response_body === null ? '' : html`<details><summary>Response body</summary><pre class="json">${a.response_body.slice(0, RESPONSE_BODY_SHOWN_CHARS_MAX)}</pre></details>`}</li>`,
      )}</ol>`;
}

/** The latest deliveries with every attempt; a writer gets a redeliver button on each. */
function deliveryLog(
  routes: ConsoleRoutes,
  identity: ConsoleIdentity,
  subscription: PresentedSubscription,
  log: PresentedDelivery[],
) {
  const writer = can(identity, 'write');
  return table(
    'Latest deliveries, newest first, with every attempt and the receiver’s response',
    ['Delivery', 'Event', 'Status', 'Attempts', writer ? 'Redeliver' : 'Created'],
    log.map((d) => [
      html`<code>${d.id}</code><br>${time(d.created_at)}`,
      html`<code>${d.event}</code>`,
      html`${statusBadge(d.status)}${d.last_error ? html`<br><span class="hint">${d.last_error}</span>` : ''}`,
      attemptList(d),
      writer
        ? html`<form method="post" action="${CONSOLE_PREFIX}/events/${d.event}/redeliver">${writeFormFields(identity, routes.formKey())}<input type="hidden" name="subscription" value="${subscription.id}"><button type="submit">Redeliver</button></form>`
        : time(d.created_at),
    ]),
    'No deliveries yet.',
  );
}

/** A subscription's page; with `shownOnce`, the secret just rotated in, shown on this answer only. */
async function renderSubscriptionPage(
  routes: ConsoleRoutes,
  request: Parameters<Handler>[0],
  reply: FastifyReply,
  identity: ConsoleIdentity,
  shownOnce?: RotatedSecret,
) {
  const { deps } = routes;
  const subscription = presentSubscription(
    await getSubscription(deps.store, identity.organizationId, request.params.id ?? ''),
  );
  const log = (await subscriptionDeliveryLog(deps, identity.organizationId, subscription.id)).map(
    presentDelivery,
  );
  const form: ActionForm = (action, body) =>
    html`<form method="post" action="${SECTION}/${subscription.id}/${action}" class="stack">
        ${writeFormFields(identity, routes.formKey())}
        ${body}</form>`;
  return routes.render(reply, {
    title: `Subscription ${subscription.id}`,
    identity,
    section: SECTION,
    notice: noticeOf(request.query),
    body: html`${shownOnce ? rotatedSecretNotice(shownOnce) : ''}${subscriptionFields(subscription)}
<h2>Actions</h2>
${
  can(identity, 'write')
    ? subscriptionActions(routes, form)
    : roleNote(identity, 'write', 'redeliver, rotate or send test events')
}
<h2>Delivery log</h2>
${deliveryLog(routes, identity, subscription, log)}`,
  });
}

/** GET /webhooks/:id: the subscription, the writer's actions, and its delivery log. */
function subscriptionPage(routes: ConsoleRoutes): Handler {
  return (request, reply, identity) => renderSubscriptionPage(routes, request, reply, identity);
}

/** The grace period a form asks for, in whole hours; undefined (the default) when left empty. */
function gracePeriodOf(body: unknown): number | undefined {
  const raw = field(body, 'grace_period_hours')?.trim();
  const grace = raw === undefined || raw === '' ? undefined : Number(raw);
  if (
    grace !== undefined &&
    (!Number.isInteger(grace) || grace < 0 || grace > WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX)
  ) {
    throw validationError(
      'grace_period_hours',
      `Hours from 0 to ${WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX}.`,
      'out_of_range',
    );
  }
  return grace;
}

/** POST /webhooks/:id/rotate: rotates the signing secret and shows the new one once. */
function rotateSecret(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const grace = gracePeriodOf(request.body);
    const result = settle(
      await routes.write(request, identity, async (tx) => {
        const rotated = await rotateSubscriptionSecret(
          tx,
          routes.deps,
          identity.organizationId,
          request.params.id ?? '',
          grace,
        );
        return {
          status: 200,
          body: presentSubscription(rotated.subscription, {
            secret: rotated.secret,
            previousSecretExpiresAt: rotated.previousSecretExpiresAt,
          }),
          sensitive: true,
        };
      }),
    ) as { secret: string; previous_secret_expires_at?: string };
    // The secret is shown on this answer only (it is not stored in clear anywhere to show again).
    return renderSubscriptionPage(routes, request, reply, identity, {
      secret: result.secret,
      previousSecretExpiresAt: result.previous_secret_expires_at,
    });
  };
}

/** POST /webhooks/:id/recover: re-sends every event created since a time. */
function recover(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const since = sinceOf(field(request.body, 'since'));
    const id = request.params.id ?? '';
    await recordWrite(routes, request, identity, 202, async (tx) => ({
      requeued: (await recoverSubscription(tx, routes.deps, identity.organizationId, id, since)).requeued,
    }));
    return redirectWithNotice(reply, `${SECTION}/${id}`, 'recovered');
  };
}

/** POST /webhooks/:id/test-event: in the sandbox only, emits a test event of the chosen type. */
function sendTestEvent(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const { deps } = routes;
    if (deps.environment !== 'sandbox') throw resourceMissing('console page', 'test-event');
    const type = field(request.body, 'type');
    if (!(EVENT_TYPES as readonly string[]).includes(type ?? '')) {
      throw validationError('type', `'${type ?? ''}' is not an event type.`, 'invalid_value');
    }
    const id = request.params.id ?? '';
    await getSubscription(deps.store, identity.organizationId, id);
    await recordWrite(routes, request, identity, 201, async (tx) => {
      const event = await emitTestEvent(tx, deps, identity.organizationId, type as EventType);
      return { id: event.id };
    });
    return redirectWithNotice(reply, `${SECTION}/${id}`, 'test_event');
  };
}

/** POST /events/:id/redeliver: redelivers an event, back to the subscription it was asked from. */
function redeliver(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const id = request.params.id ?? '';
    await recordWrite(routes, request, identity, 202, async (tx) => ({
      subscriptions: await redeliverEvent(tx, routes.deps, identity.organizationId, id),
    }));
    const subscription = idOfKind(field(request.body, 'subscription'), ID_PREFIXES.webhookSubscription);
    return redirectWithNotice(reply, subscription ? `${SECTION}/${subscription}` : SECTION, 'redelivered');
  };
}

export function webhookPages(routes: ConsoleRoutes): void {
  routes.get('/webhooks', 'read', subscriptionList(routes));
  routes.get('/webhooks/:id', 'read', subscriptionPage(routes));
  routes.post('/webhooks/:id/rotate', 'write', rotateSecret(routes));
  routes.post('/webhooks/:id/recover', 'write', recover(routes));
  routes.post('/webhooks/:id/test-event', 'write', sendTestEvent(routes));
  routes.post('/events/:id/redeliver', 'write', redeliver(routes));
}
