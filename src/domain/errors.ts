/**
 * Expected failures as a closed set of stable codes. The HTTP edge renders them as RFC 9457 problems;
 * the domain and use cases only throw them.
 */
export type ErrorCode =
  | 'validation_error'
  | 'malformed_json'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'api_key_missing'
  | 'api_key_malformed'
  | 'invalid_api_key'
  | 'api_key_revoked'
  | 'api_key_environment_mismatch'
  | 'metrics_token_invalid'
  | 'insufficient_permissions'
  | 'subscriptions_not_enabled'
  | 'resource_missing'
  | 'insufficient_funds'
  | 'wallet_not_active'
  | 'wallet_not_empty'
  | 'limit_exceeded'
  | 'amount_not_supported'
  | 'limit_not_configured'
  | 'product_not_enabled'
  | 'pilot_cap_exceeded'
  | 'compliance_blocked'
  | 'policy_denied'
  | 'member_required'
  | 'own_keys_only'
  | 'beyond_member_roles'
  | 'approval_role_required'
  | 'self_approval_forbidden'
  | 'self_review_forbidden'
  | 'not_proposer'
  | 'already_voted'
  | 'member_exists'
  | 'policy_version_conflict'
  | 'fee_schedule_version_conflict'
  | 'receipt_unavailable'
  | 'payment_batch_invalid'
  | 'duplicate_reference'
  | 'statement_invalid'
  | 'statement_already_imported'
  | 'rail_partner_exists'
  | 'credit_urls_not_registrable'
  | 'balances_not_available'
  | 'reversal_not_supported'
  | 'trust_account_exists'
  | 'safeguarding_balance_conflict'
  | 'callback_unknown'
  | 'callback_malformed'
  | 'travel_rule_required'
  | 'route_not_approved'
  | 'custody_not_configured'
  | 'sandbox_simulators_off'
  | 'rate_unavailable'
  | 'quote_expired'
  | 'rate_out_of_band'
  | 'rate_change_requires_approval'
  | 'savings_account_cannot_send'
  | 'savings_withdrawal_refused'
  | 'savings_rate_in_past'
  | 'savings_rate_exists'
  | 'repayment_exceeds_outstanding'
  | 'unknown_api_version'
  | 'api_version_downgrade'
  | 'test_clock_backwards'
  | 'test_clock_advance_too_far'
  | 'test_clock_catch_up_incomplete'
  | 'digital_accounts_not_configured'
  | 'statement_too_large'
  | 'invalid_state_transition'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_flight'
  | 'rate_limited'
  | 'rail_unavailable'
  | 'service_unavailable'
  | 'internal_error';

export interface FieldError {
  param: string;
  code: string;
  message: string;
  /** For an item of a list (a payment batch's), its 1-based row. */
  row?: number;
}

export interface AppErrorInit {
  status: number;
  code: ErrorCode;
  title: string;
  detail: string;
  param?: string | undefined;
  errors?: FieldError[] | undefined;
  /** Seconds a client should wait before retrying, when the failure is transient. */
  retryAfterSeconds?: number | undefined;
  /** True when this is a stored outcome replayed for a repeated Idempotency-Key. */
  replayed?: boolean | undefined;
  /** Problem-type members beyond RFC 9457's (a tier limit's `limit` and `remaining`, a policy's `rule`). */
  extensions?: Record<string, string> | undefined;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly title: string;
  readonly detail: string;
  readonly param: string | undefined;
  readonly errors: FieldError[];
  readonly retryAfterSeconds: number | undefined;
  readonly replayed: boolean;
  readonly extensions: Record<string, string> | undefined;

  constructor(init: AppErrorInit) {
    super(init.detail);
    this.name = 'AppError';
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.param = init.param;
    this.errors =
      init.errors ?? (init.param ? [{ param: init.param, code: init.code, message: init.detail }] : []);
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.replayed = init.replayed ?? false;
    this.extensions = init.extensions;
  }
}

export function validationError(param: string, detail: string, code = 'invalid'): AppError {
  return new AppError({
    status: 400,
    code: 'validation_error',
    title: 'Invalid request',
    detail,
    param,
    errors: [{ param, code, message: detail }],
  });
}

/** Every field at fault in one 400: `param` and `detail` are the first's. */
export function validationErrors(errors: FieldError[]): AppError {
  const first = errors[0];
  return new AppError({
    status: 400,
    code: 'validation_error',
    title: 'Invalid request',
    detail: first?.message ?? 'The request is invalid.',
    param: first?.param,
    errors,
  });
}

export function resourceMissing(resource: string, id: string, param?: string): AppError {
  return new AppError({
    status: 404,
    code: 'resource_missing',
    title: 'Resource not found',
    detail: `No ${resource} with id '${id}' exists.`,
    param,
  });
}

/** The sandbox runs without its partner simulators, so nothing can be sent through one. */
export function sandboxSimulatorsOff(): AppError {
  return new AppError({
    status: 409,
    code: 'sandbox_simulators_off',
    title: 'Partner simulators are off',
    detail:
      'This sandbox runs without its partner simulators (MKOBA_SANDBOX_SIMULATORS=0), so no money can be sent through them; start it with them on.',
  });
}

/** RFC 9457 `type` of a code. */
export function problemType(code: ErrorCode): string {
  return `urn:mkoba:error:${code}`;
}

/** The RFC 9457 problem document of an error, in the one key order every answer and replay uses. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  param?: string;
  errors: FieldError[];
  /** A tier limit refused: which one, and what remains of it (decimal string). */
  limit?: string;
  remaining?: string;
  /** A policy refused: the rule and the version it belongs to. */
  rule?: string;
  policy_version?: string;
  /** A product the organization has not enabled. */
  product?: string;
  request_id: string;
}

export function problemDocument(error: AppError, requestId: string): ProblemDocument {
  return {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.param === undefined ? {} : { param: error.param }),
    errors: error.errors,
    ...error.extensions,
    request_id: requestId,
  };
}

/**
 * The 409 for an action the record's current state does not allow: `title` names the state, `detail` the
 * record and what the caller can do instead.
 */
export function invalidStateTransition(title: string, detail: string, param?: string): AppError {
  return new AppError({ status: 409, code: 'invalid_state_transition', title, detail, param });
}

/**
 * A change's `base_version`, when given, must be the setting's current version: otherwise it changed
 * meanwhile, and the caller reads it again and re-applies its change (409; `setting` as the detail names it).
 */
export function requireBaseVersion(
  conflict: {
    setting: string;
    code: 'policy_version_conflict' | 'fee_schedule_version_conflict';
    title: string;
  },
  currentVersion: number,
  baseVersion: number | undefined,
): void {
  if (baseVersion === undefined || baseVersion === currentVersion) return;
  throw new AppError({
    status: 409,
    code: conflict.code,
    title: conflict.title,
    detail: `The ${conflict.setting} is at version ${currentVersion}, not ${baseVersion}; read it again and re-apply your change.`,
    param: 'base_version',
  });
}
