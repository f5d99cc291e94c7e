import type { FastifyInstance } from 'fastify';
import { AML_ALERT_NOTE_LENGTH_MAX, getAmlAlert, listAlerts, resolveAmlAlert } from '../../app/aml/alerts.ts';
import { type AmlRuleInput, createRule, getRule, listRules, updateRule } from '../../app/aml/rules.ts';
import type { Deps } from '../../app/deps.ts';
import {
  AML_ALERT_STATUSES,
  AML_DISPOSITIONS,
  type AmlAlertStatus,
  type AmlDisposition,
} from '../../domain/amlAlerts.ts';
import {
  AML_ACTIONS,
  AML_RULE_NAME_LENGTH_MAX,
  AML_RULE_TYPES,
  type AmlAction,
  type AmlRuleType,
} from '../../domain/decisions/aml.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { presentAmlAlert, presentAmlRule } from '../compliancePresenters.ts';
import { textSchema } from '../complianceSchemas.ts';
import type { ListQuery } from '../presenters.ts';
import { pagedList, retrieveByIdRoute } from '../readRoutes.ts';
import { changeById, makeFromBody } from '../routeEffects.ts';
import {
  closedObjectSchema,
  found,
  idempotentWrite,
  LIST_PROBLEMS,
  readOperation,
  retrieveFilteredPage,
  retrieveWholeList,
  wholeListSchema,
  writeOperation,
  written,
} from '../routeKit.ts';
import { idParamsSchema, idSchema } from '../schemas.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedChangeOfId,
  proposedCreation,
} from './changes.ts';

const TAGS = ['AML'];
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

type AlertQuery = ListQuery & {
  status?: AmlAlertStatus;
  rule_type?: AmlRuleType;
  action?: AmlAction;
  wallet?: string;
  customer?: string;
  transfer?: string;
};

const alertFilters = {
  status: { type: 'string', enum: AML_ALERT_STATUSES, description: 'Only open or only resolved alerts.' },
  rule_type: { type: 'string', enum: AML_RULE_TYPES, description: 'Only alerts of this kind of rule.' },
  action: {
    type: 'string',
    enum: ['alert', 'review'],
    description: 'Only alerts whose rule let the transfer through (`alert`) or held it (`review`).',
  },
  wallet: idSchema(ID_PREFIXES.wallet, 'Only alerts on this wallet.'),
  customer: idSchema(ID_PREFIXES.customer, 'Only alerts on this customer’s wallets.'),
  transfer: idSchema(ID_PREFIXES.transfer, 'Only alerts of this transfer.'),
};

function listAmlRulesRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/aml/rules',
    readOperation({
      scope: 'compliance',
      operationId: 'listAmlRules',
      summary: 'List AML rules',
      description:
        'The organization’s rules in the order they are evaluated; an organization starts with the defaults (docs/COMPLIANCE.md).',
      tags: TAGS,
      responses: { 200: found(wholeListSchema('AmlRule'), 'Every rule.') },
      problems: LIST_PROBLEMS,
    }),
    retrieveWholeList(deps, listRules, presentAmlRule),
  );
}

function createAmlRuleRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: NewRuleBody }>(
    '/v1/aml/rules',
    writeOperation({
      scope: 'compliance',
      operationId: 'createAmlRule',
      summary: 'Create an AML rule',
      description:
        'Recorded as evidence (`aml.rules.update`). Takes effect within 5 seconds in every process.',
      tags: TAGS,
      body: closedObjectSchema({ ...ruleFields, type: { type: 'string', enum: AML_RULE_TYPES } }, [
        'name',
        'type',
        'parameters',
        'action',
      ]),
      responses: { 201: written('AmlRule', 'The rule.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      201,
      proposedCreation('aml_rule', 'create'),
      makeFromBody(deps, createRule, presentAmlRule),
    ),
  );
}

function getAmlRuleRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/aml/rules/:id', getRule, presentAmlRule, {
    scope: 'compliance',
    operationId: 'getAmlRule',
    summary: 'Retrieve an AML rule',
    tags: TAGS,
    params: ruleParams,
    responses: { 200: found('AmlRule', 'The rule.') },
  });
}

function updateAmlRuleRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<{ Params: { id: string }; Body: Omit<AmlRuleInput, 'type'> }>(
    '/v1/aml/rules/:id',
    writeOperation({
      scope: 'compliance',
      operationId: 'updateAmlRule',
      summary: 'Change an AML rule',
      description:
        'Changes its name, parameters (of its own type, given whole), action or whether it is enabled; the version goes up by one. Recorded as evidence with the rule before and after.',
      tags: TAGS,
      params: ruleParams,
      body: { type: 'object', additionalProperties: false, minProperties: 1, properties: ruleFields },
      responses: { 200: written('AmlRule', 'The rule.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      200,
      proposedChangeOfId('aml_rule', 'update'),
      changeById(deps, updateRule, presentAmlRule),
    ),
  );
}

function listAmlAlertsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: AlertQuery }>(
    '/v1/aml/alerts',
    readOperation({
      scope: 'compliance',
      operationId: 'listAmlAlerts',
      summary: 'List AML alerts',
      description: 'Newest first. Filter `status=open` for the work queue.',
      tags: TAGS,
      ...pagedList('AmlAlert', 'A page of alerts.', ID_PREFIXES.amlAlert, alertFilters),
    }),
    retrieveFilteredPage(
      deps,
      listAlerts,
      (q: AlertQuery) => ({
        status: q.status,
        ruleType: q.rule_type,
        action: q.action,
        walletId: q.wallet,
        customerId: q.customer,
        transferId: q.transfer,
      }),
      presentAmlAlert,
    ),
  );
}

function getAmlAlertRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/aml/alerts/:id', getAmlAlert, presentAmlAlert, {
    scope: 'compliance',
    operationId: 'getAmlAlert',
    summary: 'Retrieve an AML alert',
    tags: TAGS,
    params: alertParams,
    responses: { 200: found('AmlAlert', 'The alert.') },
  });
}

function resolveAmlAlertRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { disposition: AmlDisposition; note?: string } }>(
    '/v1/aml/alerts/:id/resolve',
    writeOperation({
      scope: 'compliance',
      operationId: 'resolveAmlAlert',
      summary: 'Resolve an AML alert',
      description:
        'Closes an open alert with a disposition: `false_positive`, `escalated` (taken further inside) or `reported` (filed with the authority). Emits `aml.alert.resolved`; recorded as evidence. A resolved alert is a 409 `invalid_state_transition`.',
      tags: TAGS,
      params: alertParams,
      body: closedObjectSchema(
        {
          disposition: { type: 'string', enum: AML_DISPOSITIONS },
          note: textSchema(AML_ALERT_NOTE_LENGTH_MAX),
        },
        ['disposition'],
      ),
      responses: { 200: written('AmlAlert', 'The resolved alert.') },
    }),
    idempotentWrite(deps, 200, changeById(deps, resolveAmlAlert, presentAmlAlert)),
  );
}

/** AML rules and alerts: operators only (the `compliance` scope). */
export function amlRoutes(app: FastifyInstance, deps: Deps): void {
  listAmlRulesRoute(app, deps);
  createAmlRuleRoute(app, deps);
  getAmlRuleRoute(app, deps);
  updateAmlRuleRoute(app, deps);
  listAmlAlertsRoute(app, deps);
  getAmlAlertRoute(app, deps);
  resolveAmlAlertRoute(app, deps);
}
