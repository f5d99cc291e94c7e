/**
 * The sandbox's test clock: read an organization's clock, and advance it (then run the days it crossed).
 * Not registered in production, where the real clock is the only one.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { runIdempotent } from '../../app/idempotency.ts';
import { AppError } from '../../domain/errors.ts';
import {
  closedObjectSchema,
  found,
  organizationOf,
  readOperation,
  SANDBOX_ACCESS,
  writeOperation,
  written,
} from '../../http/routeKit.ts';
import { routesInOrder } from '../../http/routeOrder.ts';
import { closedApiObjectSchema } from '../../http/schemaBuilders.ts';
import { daySchema } from '../../http/schemas.ts';
import { idempotencyContextOf, sendOutcome } from '../../http/writes.ts';
import { TEST_CLOCK_ADVANCE_DAYS_MAX } from './domain.ts';
import { catchUpAfterAdvance } from './useCases/dayWork.ts';
import { advanceTestClock, getTestClock, testClockJson } from './useCases/testClock.ts';

export const testClockSchema = closedApiObjectSchema('TestClock', 'test_clock', {
  now: { type: 'string', format: 'date-time', description: 'The organization’s now.' },
  today: daySchema('The UTC day of `now`.'),
  offset_ms: {
    type: 'integer',
    minimum: 0,
    description: 'How far the organization’s clock runs ahead of the real one, in milliseconds.',
  },
  advances: { type: 'integer', minimum: 0, description: 'How many times the clock was advanced.' },
  advanced_at: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'When (real time) it was last advanced; null if never.',
  },
});

function getTestClockRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/sandbox/clock',
    readOperation({
      ...SANDBOX_ACCESS.read,
      operationId: 'getTestClock',
      summary: 'Read the test clock (sandbox)',
      description:
        'Your organization’s clock: the real clock until you advance it, then that far ahead. Savings and loan products accrue, capitalise, fall due and go into arrears by this clock.',
      responses: { 200: found('TestClock') },
    }),
    async (request) => testClockJson(await getTestClock(deps, organizationOf(request))),
  );
}

const advanceBody = closedObjectSchema({
  advance_to: {
    type: 'string',
    format: 'date-time',
    description: 'The instant the clock moves to: later than its now.',
  },
  advance_by_days: {
    type: 'integer',
    minimum: 1,
    maximum: TEST_CLOCK_ADVANCE_DAYS_MAX,
    description: 'Whole days to move the clock by.',
  },
});

/** Runs the days an advance crossed; a failure is a 503 the same request (same Idempotency-Key) retries. */
async function catchUp(request: FastifyRequest, deps: Deps, organizationId: string): Promise<void> {
  try {
    await catchUpAfterAdvance(deps, organizationId, deps.dayWork);
  } catch (error) {
    request.log.error({ err: error }, 'test clock catch-up failed');
    throw new AppError({
      status: 503,
      code: 'test_clock_catch_up_incomplete',
      title: 'Days not done yet',
      detail:
        'The clock has moved, but the work of the days it crossed did not finish. Send the same request again (same Idempotency-Key) to finish them; the day worker also finishes them.',
      retryAfterSeconds: 1,
    });
  }
}

function advanceTestClockRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { advance_to?: string; advance_by_days?: number } }>(
    '/v1/sandbox/clock',
    writeOperation({
      ...SANDBOX_ACCESS.write,
      operationId: 'advanceTestClock',
      summary: 'Advance the test clock (sandbox)',
      description: `Moves your organization’s clock forward, to \`advance_to\` or by \`advance_by_days\` (at most ${TEST_CLOCK_ADVANCE_DAYS_MAX} days at a time; never back: a 422 \`test_clock_backwards\`), emits \`test_clock.advanced\`, then runs every day it crossed for your products (accrual, capitalisation, due-date collection, arrears), each day once, before it answers. If that work could not finish, a 503 \`test_clock_catch_up_incomplete\`: the clock has moved, and the same request again (same Idempotency-Key) finishes the days.`,
      body: advanceBody,
      responses: { 200: written('TestClock', 'The clock, advanced, with the days it crossed done.') },
    }),
    async (request, reply) => {
      const context = idempotencyContextOf(request);
      const outcome = await runIdempotent(deps, context, async (tx) => {
        const { view } = await advanceTestClock(tx, deps, context.organizationId, request.body);
        return { status: 200, body: testClockJson(view) };
      });
      // The days are run after the advance commits, and again on a replay, until they are done.
      if (outcome.status === 200) await catchUp(request, deps, context.organizationId);
      return sendOutcome(reply, outcome);
    },
  );
}

export const testClockRoutes = routesInOrder(getTestClockRoute, advanceTestClockRoute);
