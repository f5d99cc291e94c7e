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
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { presentAmlAlert, presentAmlRule } from '../compliancePresenters.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';
import { governedWrite, pendingChangeResponse } from './changes.ts';

const TAGS = ['AML'];
const ruleParams = idParamsSchema(ID_PREFIXES.amlRule, 'Rule id.');
const alertParams = idParamsSchema(ID_PREFIXES.amlAlert, 'Alert id.');
const ruleFields = {
  name: { type: 'string', minLength: 1, maxLength: AML_RULE_NAME_LENGTH_MAX },
  parameters: {
    type: 'object',
    description:
      'By `type`: `single_transfer_threshold` and `new_counterparty_high_value` {currency, amount}; `velocity` {currency, window_seconds, count_max?, amount_max?}; `structuring` {currency, threshold, margin_bp, count_min, window_seconds}; `rapid_movement` {currency, window_seconds, share_bp, amount_min}. Money as decimal strings.',
  },
  action: { type: 'string', enum: AML_ACTIONS },
  enabled: { type: 'boolean' },
} as const;

/** AML rules and alerts: operators only (the `compliance` scope). */
export function amlRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/aml/rules',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listAmlRules',
        summary: 'List AML rules',
        description:
          'The organization’s rules in the order they are evaluated; an organization starts with the defaults (docs/COMPLIANCE.md).',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: {
            description: 'Every rule.',
            type: 'object',
            required: ['object', 'data'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'AmlRule#' } },
            },
          },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => ({
      object: 'list',
      data: (await listRules(deps, principalOf(request).organizationId)).map(presentAmlRule),
    }),
  );

  app.post<{
    Body: Required<Pick<AmlRuleInput, 'name' | 'type' | 'parameters' | 'action'>> & { enabled?: boolean };
  }>(
    '/v1/aml/rules',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'createAmlRule',
        summary: 'Create an AML rule',
        description:
          'Recorded as evidence (`aml.rules.update`). Takes effect within 5 seconds in every process.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'type', 'parameters', 'action'],
          properties: { ...ruleFields, type: { type: 'string', enum: AML_RULE_TYPES } },
        },
        response: {
          201: { description: 'The rule.', headers: idempotentWriteHeaders, $ref: 'AmlRule#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'aml_rule', action: 'create', targetId: null, payload: request.body },
          async () => ({
            status: 201,
            body: presentAmlRule(
              await createRule(tx, deps, organizationId, request.body, requestActor(request)),
            ),
          }),
        ),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/aml/rules/:id',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'getAmlRule',
        summary: 'Retrieve an AML rule',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: ruleParams,
        response: {
          200: { description: 'The rule.', $ref: 'AmlRule#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentAmlRule(await getRule(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.patch<{ Params: { id: string }; Body: Omit<AmlRuleInput, 'type'> }>(
    '/v1/aml/rules/:id',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'updateAmlRule',
        summary: 'Change an AML rule',
        description:
          'Changes its name, parameters (of its own type, given whole), action or whether it is enabled; the version goes up by one. Recorded as evidence with the rule before and after.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: ruleParams,
        body: { type: 'object', additionalProperties: false, minProperties: 1, properties: ruleFields },
        response: {
          200: { description: 'The rule.', headers: idempotentWriteHeaders, $ref: 'AmlRule#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'aml_rule', action: 'update', targetId: request.params.id, payload: request.body },
          async () => ({
            status: 200,
            body: presentAmlRule(
              await updateRule(
                tx,
                deps,
                organizationId,
                request.params.id,
                request.body,
                requestActor(request),
              ),
            ),
          }),
        ),
      ),
  );

  app.get<{
    Querystring: ListQuery & {
      status?: AmlAlertStatus;
      rule_type?: AmlRuleType;
      action?: AmlAction;
      wallet?: string;
      customer?: string;
      transfer?: string;
    };
  }>(
    '/v1/aml/alerts',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listAmlAlerts',
        summary: 'List AML alerts',
        description: 'Newest first. Filter `status=open` for the work queue.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.amlAlert, {
          status: {
            type: 'string',
            enum: AML_ALERT_STATUSES,
            description: 'Only open or only resolved alerts.',
          },
          rule_type: {
            type: 'string',
            enum: AML_RULE_TYPES,
            description: 'Only alerts of this kind of rule.',
          },
          action: {
            type: 'string',
            enum: ['alert', 'review'],
            description: 'Only alerts whose rule let the transfer through (`alert`) or held it (`review`).',
          },
          wallet: idSchema(ID_PREFIXES.wallet, 'Only alerts on this wallet.'),
          customer: idSchema(ID_PREFIXES.customer, 'Only alerts on this customer’s wallets.'),
          transfer: idSchema(ID_PREFIXES.transfer, 'Only alerts of this transfer.'),
        }),
        response: {
          200: listEnvelopeSchema('AmlAlert', 'A page of alerts.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listAlerts(deps, principalOf(request).organizationId, {
        ...pageRequestOf(q),
        status: q.status,
        ruleType: q.rule_type,
        action: q.action,
        walletId: q.wallet,
        customerId: q.customer,
        transferId: q.transfer,
      });
      return presentList(page, presentAmlAlert);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/aml/alerts/:id',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'getAmlAlert',
        summary: 'Retrieve an AML alert',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: alertParams,
        response: {
          200: { description: 'The alert.', $ref: 'AmlAlert#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentAmlAlert(await getAmlAlert(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.post<{ Params: { id: string }; Body: { disposition: AmlDisposition; note?: string } }>(
    '/v1/aml/alerts/:id/resolve',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'resolveAmlAlert',
        summary: 'Resolve an AML alert',
        description:
          'Closes an open alert with a disposition: `false_positive`, `escalated` (taken further inside) or `reported` (filed with the authority). Emits `aml.alert.resolved`; recorded as evidence. A resolved alert is a 409 `invalid_state_transition`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: alertParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['disposition'],
          properties: {
            disposition: { type: 'string', enum: AML_DISPOSITIONS },
            note: { type: 'string', minLength: 1, maxLength: AML_ALERT_NOTE_LENGTH_MAX },
          },
        },
        response: {
          200: { description: 'The resolved alert.', headers: idempotentWriteHeaders, $ref: 'AmlAlert#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentAmlAlert(
          await resolveAmlAlert(
            tx,
            deps,
            organizationId,
            request.params.id,
            request.body,
            requestActor(request),
          ),
        ),
      })),
  );
}
