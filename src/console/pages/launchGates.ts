/**
 * Launch gates: each product's checks before pilot or production keys, their state, what decided it and
 * when it changed. Read-only, like `GET /v1/launch-gates` (the `read` scope); overrides are the operators'
 * CLI (`mkoba launch-gates override`), never the organization's own. In the sandbox, showing the page
 * evaluates the gates, as the API's read does.
 */
import { launchGatesOf } from '../../modules/launchGates/index.ts';
import { findOrganization } from '../../store/repositories/organizations.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, jsonBlock, statusBadge, table, time } from '../layout.ts';
import { noticeOf } from '../notices.ts';
import type { ConsoleRoutes } from '../routing.ts';

const SECTION = `${CONSOLE_PREFIX}/launch-gates`;

export function launchGatePages(routes: ConsoleRoutes): void {
  const { deps } = routes;

  routes.get('/launch-gates', 'read', async (request, reply, identity) => {
    const organization = await findOrganization(deps.store, identity.organizationId);
    const { gates } = await launchGatesOf(deps, {
      id: identity.organizationId,
      name: organization?.name ?? '',
    });
    const open = gates.filter((g) => g.state === 'open').length;
    return routes.render(reply, {
      title: 'Launch gates',
      identity,
      section: SECTION,
      notice: noticeOf(request.query),
      body: html`<p>${
        gates.length === 0
          ? 'No gates: this organization launches no product.'
          : open === 0
            ? html`<strong>Every gate has passed</strong>: pilot and production keys can be issued.`
            : html`<strong>${open} of ${gates.length} gates open</strong>: pilot and production keys are refused until they pass (or an operator overrides them, recorded as evidence).`
      }</p>
${table(
  'Launch gates by product',
  ['Product', 'Gate', 'State', 'What decided it', 'Evidence record', 'Changed'],
  gates.map((g) => [
    g.product.replace(/_/g, ' '),
    g.gate.replace(/_/g, ' '),
    statusBadge(g.state),
    html`<details><summary>${g.override ? `overridden: ${g.override.reason}` : 'evidence'}</summary>${jsonBlock(g.evidence)}</details>`,
    g.evidenceRecordId ? html`<code>${g.evidenceRecordId}</code>` : html`—`,
    time(g.updatedAt),
  ]),
)}`,
    });
  });
}
