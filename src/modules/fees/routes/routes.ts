/** The fee schedule (read by any key, changed by admins) and its versions. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { requestActor, requestActorId } from '../../../http/auth.ts';
import { organizationOf, written } from '../../../http/routeKit.ts';
import {
  replaceSettingOperation,
  type VersionedSetting,
  versionedSettingReadRoutes,
} from '../../../http/versionedSettingRoutes.ts';
import { sendWrite } from '../../../http/writes.ts';
import { governedWrite, pendingChangeResponse } from '../../authorization/index.ts';
import { type FeeSchedule, feeRuleJson } from '../domain.ts';
import {
  type FeeScheduleUpdateInput,
  forgetFeeSchedule,
  getCurrentFeeSchedule,
  getFeeScheduleVersion,
  listVersions,
  updateFeeSchedule,
} from '../useCases.ts';
import { feeScheduleBodySchema } from './schemas.ts';

export const FEE_TAGS = ['Fees'];
const TAGS = FEE_TAGS;

export function presentFeeSchedule(schedule: FeeSchedule) {
  return {
    object: 'fee_schedule',
    version: schedule.version,
    rules: schedule.rules.map(feeRuleJson),
    created_by: schedule.createdBy,
    created_at: schedule.createdAt.toISOString(),
  };
}

/** The fee schedule as its versions are read. */
const FEE_SCHEDULE: VersionedSetting<FeeSchedule> = {
  path: '/v1/fee-schedule',
  tags: TAGS,
  schema: 'FeeSchedule',
  getCurrent: getCurrentFeeSchedule,
  getVersion: getFeeScheduleVersion,
  listVersions,
  present: presentFeeSchedule,
  name: { operation: 'FeeSchedule', words: 'fee schedule' },
  descriptions: {
    current:
      'The organization’s fee rules as they stand: one per rail and currency. Before any change it is version 1, with no rules: no fees.',
    version: 'The version a transfer’s fee names (`fee_schedule.version` on a transfer or a quote).',
  },
};

function updateFeeScheduleRoute(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: FeeScheduleUpdateInput }>(
    FEE_SCHEDULE.path,
    replaceSettingOperation(FEE_SCHEDULE, {
      description:
        'Writes the rules as the next version, recorded as evidence (`fee_schedule.update`). New transfers are charged by it at once in this process and within 5 seconds everywhere; transfers made before keep the fee and version they were charged. Each rule is checked field by field: a fault is a 400 naming it (`rules.2.percent_bps`, `rules.1.tiers.0.up_to`), and a rail that does not carry the currency is `unsupported_by_rail`.',
      body: feeScheduleBodySchema,
      responses: { 200: written('FeeSchedule', 'The new version.'), 202: pendingChangeResponse },
    }),
    async (request, reply) => {
      const organizationId = organizationOf(request);
      const sent = await sendWrite(deps, request, reply, async (tx) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'fee_schedule', action: 'set', targetId: null, payload: request.body },
          async () => ({
            status: 200,
            body: presentFeeSchedule(
              await updateFeeSchedule(
                tx,
                deps,
                organizationId,
                request.body,
                requestActorId(request),
                requestActor(request),
              ),
            ),
          }),
        ),
      );
      // Forgotten again once committed: a transfer racing the write may have cached the version before it.
      forgetFeeSchedule(deps, organizationId);
      return sent;
    },
  );
}

export function feeRoutes(app: FastifyInstance, deps: Deps): void {
  versionedSettingReadRoutes(app, deps, FEE_SCHEDULE);
  updateFeeScheduleRoute(app, deps);
}
