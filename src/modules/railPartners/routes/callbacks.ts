/**
 * Where partners call back: `/v1/rails/{rail}/callbacks/{token}/…`, no API key (the unguessable path token
 * names the organization's partner configuration). The body is stored exactly as sent before the answer
 * goes back; a 200 means "stored", whatever applying it found. A callback whose partner reads the answer (a
 * C2B validation) is answered in the partner's shape.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import { publicOperation } from '../../../http/routeKit.ts';
import { callbackStoredResponses, transferRailSchema } from '../../../http/schemas.ts';
import { RAIL_CALLBACK_BODY_BYTES_MAX, receiveRailCallback } from '../useCases/callbacks.ts';
import { railPartnerDirectory } from '../useCases/directory.ts';
import { TAGS } from './schemas.ts';

/** Characters of the path after the token at most (partners use short fixed paths). */
const CALLBACK_SUBPATH_LENGTH_MAX = 200;

interface CallbackParams {
  rail: string;
  token: string;
  '*': string;
}

async function receiveCallback(
  deps: Deps,
  request: FastifyRequest<{ Params: CallbackParams; Body: string | undefined }>,
  reply: FastifyReply,
) {
  const receipt = await receiveRailCallback(deps, railPartnerDirectory(deps), {
    rail: request.params.rail,
    token: request.params.token,
    path: request.params['*'],
    headers: request.headers,
    rawBody: typeof request.body === 'string' ? request.body : '',
  });
  if (receipt.status === 'malformed') {
    throw new AppError({
      status: 400,
      code: 'callback_malformed',
      title: 'Malformed callback',
      detail: `The callback was stored as ${receipt.callbackId} but is not in the partner's shape, so it changed nothing.`,
    });
  }
  // A partner that reads our answer (a C2B validation's decision) gets it in its own shape, as JSON text.
  if (receipt.answer) return reply.type('application/json').send(JSON.stringify(receipt.answer));
  return { received: true, id: receipt.callbackId, status: receipt.status };
}

export function railCallbackRoutes(app: FastifyInstance, deps: Deps): void {
  for (const method of ['POST', 'PUT'] as const) {
    app.route<{ Params: CallbackParams; Body: string | undefined }>({
      method,
      url: '/v1/rails/:rail/callbacks/:token/*',
      bodyLimit: RAIL_CALLBACK_BODY_BYTES_MAX,
      ...publicOperation({
        // For partners, not integrators: left out of the API description (docs/RAILS.md describes it).
        hide: true,
        operationId: method === 'POST' ? 'receiveRailCallback' : 'receiveRailCallbackPut',
        summary: method === 'POST' ? 'Receive a partner callback' : 'Receive a partner callback (PUT)',
        description:
          'For partners, not integrators: the callback address of a rail partner configuration (`callback_url` on it, plus the partner’s own path). Needs no API key; the token in the path is the credential, and an unknown one is a 404 `callback_unknown`. The body is stored as sent before the answer; a repeat of the same bytes is recorded as a duplicate and changes nothing; one that is not the partner’s shape is stored and answered 400 `callback_malformed`.',
        tags: TAGS,
        config: { rawBody: true },
        params: {
          type: 'object',
          required: ['rail', 'token', '*'],
          properties: {
            rail: transferRailSchema,
            token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
            '*': { type: 'string', maxLength: CALLBACK_SUBPATH_LENGTH_MAX },
          },
        },
        responses: callbackStoredResponses,
        problems: [400, 404, 413, 429, 500, 503],
      }),
      handler: (request, reply) => receiveCallback(deps, request, reply),
    });
  }
}
