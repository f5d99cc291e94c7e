/**
 * Where Smile ID POSTs an organization's results: `/v1/verification_provider/callbacks/{token}`, no API
 * key (the unguessable path token names the organization's configuration, as rail partners' callbacks
 * do). The body is stored as sent before the answer goes back; a 200 means "stored".
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { publicOperation } from '../../../http/routeKit.ts';
import { callbackStoredResponses } from '../../../http/schemas.ts';
import { receiveSmileIdCallback, SMILE_ID_CALLBACK_BODY_BYTES_MAX } from '../useCases/smileId/callbacks.ts';

export function smileIdCallbackRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { token: string }; Body: string | undefined }>(
    '/v1/verification_provider/callbacks/:token',
    {
      bodyLimit: SMILE_ID_CALLBACK_BODY_BYTES_MAX,
      ...publicOperation({
        // For Smile ID, not integrators: left out of the API description (docs/rails/smile-id.md describes it).
        hide: true,
        operationId: 'receiveVerificationProviderCallback',
        summary: 'Receive a verification provider callback',
        description:
          'For Smile ID, not integrators: the callback address of an organization’s Smile ID configuration. Needs no API key; the token in the path is the credential. The body is stored as sent; a result is applied once.',
        tags: ['Verifications'],
        config: { rawBody: true },
        params: {
          type: 'object',
          required: ['token'],
          properties: { token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } },
        },
        responses: callbackStoredResponses,
        problems: [400, 404, 413, 429, 500, 503],
      }),
      handler: async (request) => {
        const rawBody = typeof request.body === 'string' ? request.body : '';
        const receipt = await receiveSmileIdCallback(deps, request.params.token, rawBody);
        return { received: true, ...receipt };
      },
    },
  );
}
