/** RFC 9457 problem+json rendering for every failure: expected ones, framework ones, and bugs. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, type FieldError } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  param?: string;
  errors: FieldError[];
  request_id: string;
}

export function problemType(code: ErrorCode): string {
  return `urn:mkoba:error:${code}`;
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const problem: Problem = {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.param === undefined ? {} : { param: error.param }),
    errors: error.errors,
    request_id: request.id,
  };
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
  if (error.replayed) reply.header('Idempotent-Replayed', 'true');
  // A string payload skips response serialisation: a problem is rendered exactly as built here.
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

interface AjvIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const AJV_KEYWORD_CODES: Record<string, string> = {
  required: 'missing',
  additionalProperties: 'unknown_field',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  pattern: 'invalid_format',
  format: 'invalid_format',
  minLength: 'too_short',
  maxLength: 'too_long',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  maxProperties: 'too_many',
  minProperties: 'too_few',
  maxItems: 'too_many',
  minItems: 'too_few',
  propertyNames: 'invalid_key',
};

/** The canonical spelling of header names used as a `param`. */
const HEADER_PARAMS: Record<string, string> = { 'idempotency-key': 'Idempotency-Key' };

function fieldErrorFromAjv(issue: AjvIssue, context: string): FieldError {
  const segments = issue.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let code = AJV_KEYWORD_CODES[issue.keyword] ?? 'invalid';
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'required') segments.push(String(issue.params.missingProperty));
  if (issue.keyword === 'additionalProperties') {
    segments.push(String(issue.params.additionalProperty));
    message = 'is not a known field';
  }
  if (issue.keyword === 'propertyNames' && issue.params.propertyName !== undefined) {
    segments.push(String(issue.params.propertyName));
  }
  if (issue.keyword === 'enum')
    message = `must be one of: ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  if (issue.keyword === 'type' && segments.length === 0 && context === 'body') {
    code = 'invalid_type';
    message = 'The request body must be a JSON object.';
  }
  let param = segments.join('.');
  if (context === 'headers') param = HEADER_PARAMS[param] ?? param;
  const subject = param === '' ? (context === 'body' ? 'body' : context) : param;
  return { param: subject, code, message: message.startsWith('The ') ? message : `${subject} ${message}` };
}

/** Maps anything thrown while handling a request to an AppError; unknown errors become a 500 without details. */
export function toAppError(thrown: unknown): AppError {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    const context = fastifyError.validationContext ?? 'body';
    const errors = fastifyError.validation.map((issue) => fieldErrorFromAjv(issue, context));
    const first = errors[0];
    return new AppError({
      status: 400,
      code: 'validation_error',
      title: 'Invalid request',
      detail: first ? first.message : 'The request is invalid.',
      param: first?.param,
      errors,
    });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError({
        status: 415,
        code: 'unsupported_media_type',
        title: 'Unsupported media type',
        detail: "Send request bodies as JSON with 'Content-Type: application/json'.",
        param: 'Content-Type',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError({
        status: 413,
        code: 'payload_too_large',
        title: 'Payload too large',
        detail: 'The request body is larger than this API accepts.',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError({
        status: 400,
        code: 'malformed_json',
        title: 'Malformed JSON',
        detail: "The body is empty but 'Content-Type' says JSON: send a JSON object.",
      });
  }
  const status = fastifyError.statusCode;
  if (status === 400 && (error instanceof SyntaxError || fastifyError.code?.startsWith('FST_ERR_CTP'))) {
    return new AppError({
      status: 400,
      code: 'malformed_json',
      title: 'Malformed JSON',
      detail: `The request body is not valid JSON: ${error.message}`,
    });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError({ status, code: 'validation_error', title: 'Bad request', detail: error.message });
  }
  return new AppError({
    status: 500,
    code: 'internal_error',
    title: 'Internal error',
    detail: 'Something went wrong on our side. Quote the request_id if you contact support.',
  });
}

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: a field, header or query parameter is wrong (`validation_error`, `malformed_json`).',
  401: 'The API key is missing, malformed, unknown, revoked or of the other environment.',
  403: 'The API key lacks the scope this operation needs (`insufficient_permissions`).',
  404: 'No such resource in your organization (`resource_missing`).',
  409: 'A request with this Idempotency-Key is still in progress (`idempotency_key_in_flight`, with `Retry-After`), or the resource is in a state that does not allow the operation (`invalid_state_transition`, `wallet_not_active`).',
  413: 'The body is over the size limit, as sent or once decoded (`payload_too_large`).',
  415: 'The body is not JSON, or its Content-Encoding is not gzip, deflate or br (`unsupported_media_type`).',
  422: 'The Idempotency-Key was used with a different request (`idempotency_key_reused`), or the operation was refused (`insufficient_funds`).',
  500: 'An unexpected error (`internal_error`).',
  503: 'The service cannot reach its database (`service_unavailable`).',
};

const RETRY_AFTER_HEADER = {
  'Retry-After': {
    type: 'integer',
    minimum: 0,
    description: 'Seconds to wait before retrying the request.',
  },
} as const;

/** Response headers sent with some problems (see sendProblem), by status. */
const PROBLEM_HEADERS: Record<number, Record<string, object>> = {
  409: RETRY_AFTER_HEADER,
  503: RETRY_AFTER_HEADER,
};

/**
 * The OpenAPI responses of the given problem statuses: each an `application/problem+json` body that
 * references the shared `Problem` schema, so the document names it as a component.
 */
export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => {
      const description = PROBLEM_DESCRIPTIONS[status];
      if (description === undefined) throw new Error(`no problem description for HTTP status ${status}`);
      const headers = PROBLEM_HEADERS[status];
      return [
        status,
        {
          description,
          ...(headers === undefined ? {} : { headers }),
          content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: 'Problem#' } } },
        },
      ];
    }),
  );
}

export const READ_PROBLEMS = [400, 401, 403, 404, 500];
export const WRITE_PROBLEMS = [400, 401, 403, 404, 409, 413, 415, 422, 500];
