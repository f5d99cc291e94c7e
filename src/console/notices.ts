/**
 * What a page says after a write redirected to it (`?notice=code`): a fixed set of sentences, so nothing
 * from the URL is ever shown as text.
 */
import type { FastifyReply } from 'fastify';

export const NOTICES = {
  signed_out: 'You are signed out.',
  password_set: 'Your password is set. Other sessions of yours were signed out.',
  link_signed_in: 'Signed in with a one-time link. Set a password below to sign in without one next time.',
  voted: 'Your vote is recorded.',
  review_decided: 'The case is decided.',
  alert_resolved: 'The alert is resolved.',
  exception_resolved: 'The exception is resolved.',
  redelivered: 'The event is queued for delivery again.',
  recovered: 'The events since that time are queued for delivery again.',
  test_event: 'A test event was emitted; its deliveries appear below.',
  key_revoked: 'The key is revoked: requests with it are refused from now on.',
  export_started: 'The export is queued; this page follows its progress.',
  batch_canceled: 'The batch is canceled.',
} as const;
export type NoticeCode = keyof typeof NOTICES;

export function noticeOf(query: unknown): string | undefined {
  const code = (query as Record<string, unknown> | undefined)?.notice;
  return typeof code === 'string' && Object.hasOwn(NOTICES, code) ? NOTICES[code as NoticeCode] : undefined;
}

export function withNotice(path: string, code: NoticeCode): string {
  return `${path}${path.includes('?') ? '&' : '?'}notice=${code}`;
}

/** The redirect that ends a write (post/redirect/get): back to `path`, saying what happened. */
export function redirectWithNotice(reply: FastifyReply, path: string, code: NoticeCode): FastifyReply {
  return reply.redirect(withNotice(path, code), 303);
}
