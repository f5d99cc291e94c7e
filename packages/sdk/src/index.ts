/** @mkoba/sdk: the Mkoba API client and webhook verifier. No runtime dependencies; Node 20 or later. */
export {
  type ClientOptions,
  createClient,
  MAX_RETRIES_DEFAULT,
  MkobaApiError,
  type MkobaClient,
  MkobaConnectionError,
  paginate,
  TIMEOUT_MS_DEFAULT,
} from './client.ts';
export * from './generated.ts';
export type { HttpMethod, List, OperationSpec, RequestOptions } from './operation.ts';
export {
  createWebhookReceiver,
  type ProcessedEventStore,
  type WebhookReceiverBody,
  type WebhookReceiverOptions,
  type WebhookReceiverResponse,
  type WebhookSecrets,
} from './receiver.ts';
export {
  type HeaderGetter,
  signWebhook,
  toCamelCase,
  type VerifyWebhookOptions,
  verifyWebhook,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TOLERANCE_SECONDS_DEFAULT,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks.ts';
