/** AML rules (listed, created, read, changed: governed) and alerts (listed, read, resolved). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import {
  AML_ALERT_STATUSES,
  AML_DISPOSITIONS,
  type AmlAlertStatus,
  type AmlDisposition,
} from '../../../domain/amlAlerts.ts';
import {
  AML_ACTIONS,
  AML_RULE_NAME_LENGTH_MAX,
  AML_RULE_TYPES,
  type AmlAction,
  type AmlRuleType,
} from '../../../domain/decisions/aml.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  enumFilter,
  foundById,
  listAndRetrieveRoutes,
  pagedList,
  retrieveByIdRoute,
} from '../../../http/readRoutes.ts';
import { changeById, makeFromBody } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  found,
  LIST_PROBLEMS,
  readOperation,
  retrieveWholeList,
  wholeListSchema,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { changeBodySchema } from '../../../http/schemaBuilders.ts';
import { idParamsSchema, idSchema } from '../../../http/schemas.ts';
import { writeRoute } from '../../../http/writeRoutes.ts';
import {
  governedWriteRoute,
  proposedChangeOfId,
  proposedCreation,
  writtenOrPending,
} from '../../authorization/index.ts';
import {
  AML_ALERT_NOTE_LENGTH_MAX,
  getAmlAlert,
  listAlerts,
  resolveAmlAlert,
} from '../useCases/aml/alerts.ts';
import { type AmlRuleInput, createRule, getRule, listRules, updateRule } from '../useCases/aml/rules.ts';
import { presentAmlAlert, presentAmlRule } from './presenters.ts';
import { textSchema } from './schemas.ts';

const ACCESS = accessByScope(['AML']);
const ruleParams = idParamsSchema(ID_PREFIXES.amlRule, 'Rule id.');
const alertParams = idParamsSchema(ID_PREFIXES.amlAlert, 'Alert id.');
const ruleFields = {
  name: textSchema(AML_RULE_NAME_LENGTH_MAX),
  parameters: {
    type: 'object',
    description:
      'By `type`: `single_transfer_threshold` and `new_counterparty_high_value` {currency, amount}; `velocity` {currency, window_seconds, count_max?, amount_max?}; `structuring` {currency, threshold, margin_bp, count_min, window_seconds}; `rapid_movement` {currency, window_seconds, share_bp, amount_min}. Money as decimal strings.',
  },
  action: { type: 'string', enum: AML_ACTIONS },
  enabled: { type: 'boolean' },
} as const;

type NewRuleBody = Required<Pick<AmlRuleInput, 'name' | 'type' | 'parameters' | 'action'>> & {
  enabled?: boolean;
};

type AlertQuery = {
  status?: AmlAlertStatus;
  rule_type?: AmlRuleType;
  action?: AmlAction;
  wallet?: string;
  customer?: string;
  transfer?: string;
};

const alertFilters = {
  status: enumFilter(AML_ALERT_STATUSES, 'Only open or only resolved alerts.'),
  rule_type: enumFilter(AML_RULE_TYPES, 'Only alerts of this kind of rule.'),
  action: enumFilter(
    ['alert', 'review'],
    'Only alerts whose rule let the transfer through (`alert`) or held it (`review`).',
  ),
  wallet: idSchema(ID_PREFIXES.wallet, 'Only alerts on this wallet.'),
  customer: idSchema(ID_PREFIXES.customer, 'Only alerts on this customer’s wallets.'),
  transfer: idSchema(ID_PREFIXES.transfer, 'Only alerts of this transfer.'),
};

function listAmlRulesRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/aml/rules',
    readOperation({
      ...ACCESS.compliance,
      operationId: 'listAmlRules',
      summary: 'List AML rules',
      description:
        'The organization’s rules in the order they are evaluated; an organization starts with the defaults (docs/COMPLIANCE.md).',
      responses: { 200: found(wholeListSchema('AmlRule'), 'Every rule.') },
      problems: LIST_PROBLEMS,
    }),
    retrieveWholeList(deps, listRules, presentAmlRule),
  );
}

function createAmlRuleRoute(app: FastifyInstance, deps: Deps): void {
  governedWriteRoute<{ Body: NewRuleBody }>(
    app,
    deps,
    'POST',
    '/v1/aml/rules',
    201,
    proposedCreation('aml_rule', 'create'),
    makeFromBody(deps, createRule, presentAmlRule),
    {
      ...ACCESS.compliance,
      operationId: 'createAmlRule',
      summary: 'Create an AML rule',
      description:
        'Recorded as evidence (`aml.rules.update`). Takes effect within 5 seconds in every process.',
      body: closedObjectSchema({ ...ruleFields, type: { type: 'string', enum: AML_RULE_TYPES } }, [
        'name',
        'type',
        'parameters',
        'action',
      ]),
      responses: writtenOrPending(201, 'AmlRule', 'The rule.'),
    },
  );
}

function getAmlRuleRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/aml/rules/:id', getRule, presentAmlRule, {
    ...ACCESS.compliance,
    operationId: 'getAmlRule',
    summary: 'Retrieve an AML rule',
    ...foundById(ruleParams, 'AmlRule', 'The rule.'),
  });
}

function updateAmlRuleRoute(app: FastifyInstance, deps: Deps): void {
  governedWriteRoute<{ Params: { id: string }; Body: Omit<AmlRuleInput, 'type'> }>(
    app,
    deps,
    'PATCH',
    '/v1/aml/rules/:id',
    200,
    proposedChangeOfId('aml_rule', 'update'),
    changeById(deps, updateRule, presentAmlRule),
    {
      ...ACCESS.compliance,
      operationId: 'updateAmlRule',
      summary: 'Change an AML rule',
      description:
        'Changes its name, parameters (of its own type, given whole), action or whether it is enabled; the version goes up by one. Recorded as evidence with the rule before and after.',
      params: ruleParams,
      body: changeBodySchema(ruleFields),
      responses: writtenOrPending(200, 'AmlRule', 'The rule.'),
    },
  );
}

function amlAlertReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/aml/alerts',
    access: ACCESS.compliance,
    present: presentAmlAlert,
    list: {
      operationId: 'listAmlAlerts',
      summary: 'List AML alerts',
      description: 'Newest first. Filter `status=open` for the work queue.',
      ...pagedList('AmlAlert', 'A page of alerts.', ID_PREFIXES.amlAlert, alertFilters),
    },
    page: listAlerts,
    filtersOf: (q: AlertQuery) => ({
      status: q.status,
      ruleType: q.rule_type,
      action: q.action,
      walletId: q.wallet,
      customerId: q.customer,
      transferId: q.transfer,
    }),
    retrieve: {
      operationId: 'getAmlAlert',
      summary: 'Retrieve an AML alert',
      ...foundById(alertParams, 'AmlAlert', 'The alert.'),
    },
    get: getAmlAlert,
  });
}

function resolveAmlAlertRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string }; Body: { disposition: AmlDisposition; note?: string } }>(
    app,
    deps,
    'POST',
    '/v1/aml/alerts/:id/resolve',
    200,
    changeById(deps, resolveAmlAlert, presentAmlAlert),
    {
      ...ACCESS.compliance,
      operationId: 'resolveAmlAlert',
      summary: 'Resolve an AML alert',
      description:
        'Closes an open alert with a disposition: `false_positive`, `escalated` (taken further inside) or `reported` (filed with the authority). Emits `aml.alert.resolved`; recorded as evidence. A resolved alert is a 409 `invalid_state_transition`.',
      params: alertParams,
      body: closedObjectSchema(
        {
          disposition: { type: 'string', enum: AML_DISPOSITIONS },
          note: textSchema(AML_ALERT_NOTE_LENGTH_MAX),
        },
        ['disposition'],
      ),
      responses: { 200: written('AmlAlert', 'The resolved alert.') },
    },
  );
}

/** AML rules and alerts: operators only (the `compliance` scope). */
export const amlRoutes = routesInOrder(
  listAmlRulesRoute,
  createAmlRuleRoute,
  getAmlRuleRoute,
  updateAmlRuleRoute,
  amlAlertReadRoutes,
  resolveAmlAlertRoute,
);
