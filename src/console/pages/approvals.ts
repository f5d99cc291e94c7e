/**
 * The approvals queue and an approval with its votes: approve or reject with a comment, under the same
 * rules as the API (the initiator never votes: maker ≠ checker; a role the rule names; one vote each).
 */

import { type ConsoleIdentity, consoleActor, consoleVoter } from '../../app/console/session.ts';
import { MEMBER_ROLES, type MemberRole } from '../../domain/access.ts';
import {
  APPROVAL_COMMENT_CHARS_MAX,
  APPROVAL_STATUSES,
  type Approval,
  type ApprovalStatus,
  type VoteDecision,
  voteRefusal,
} from '../../domain/approvals.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  getApproval,
  listApprovals,
  presentApproval,
  voteOnApproval,
} from '../../modules/authorization/index.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, fields, idLink, statusBadge, table, time, writeFormFields } from '../layout.ts';
import { noticeOf, redirectWithNotice } from '../notices.ts';
import { type StatusList, statusListPage } from '../queues.ts';
import {
  type ConsoleRoutes,
  field,
  type Handler,
  oneOf,
  optionalNote,
  recordOrganizationWrite,
} from '../routing.ts';

const SECTION = `${CONSOLE_PREFIX}/approvals`;

function resourceLink(type: string, id: string) {
  return type === 'transfer' ? idLink(`${CONSOLE_PREFIX}/transfers`, id) : html`<code>${id}</code>`;
}

/** The status filter asked for: 'all' is none, an unknown one is the pending queue. */
function statusFilterOf(value: string | undefined): ApprovalStatus | undefined {
  return value === 'all' ? undefined : (oneOf(APPROVAL_STATUSES, value) ?? 'pending');
}

/** The queue's rows: each approval, its votes so far, and whether the member may vote (or why not). */
function approvalRows(approvals: Approval[], identity: ConsoleIdentity, now: Date) {
  const voter = consoleVoter(identity);
  return approvals.map((a) => {
    const refusal = voteRefusal(a, voter, now);
    return [
      idLink(SECTION, a.id),
      html`${a.resourceType} ${resourceLink(a.resourceType, a.resourceId)}`,
      a.rule,
      `${a.votes.filter((v) => v.decision === 'approve').length} of ${a.quorum}`,
      a.initiatedBy === identity.member.id ? html`<strong>you</strong>` : html`<code>${a.initiatedBy}</code>`,
      time(a.expiresAt),
      statusBadge(a.status),
      refusal === undefined ? html`<strong>can vote</strong>` : refusal.code.replace(/_/g, ' '),
    ];
  });
}

const APPROVAL_LIST: StatusList<ApprovalStatus> = {
  title: 'Approvals',
  section: SECTION,
  idPrefix: ID_PREFIXES.approval,
  headers: ['Approval', 'For', 'Rule', 'Votes', 'Initiated by', 'Expires', 'Status', 'You'],
  statusOf: statusFilterOf,
  filter: (
    status,
  ) => html`<form method="get" action="${SECTION}" class="search" aria-label="Filter approvals">
  <div><label for="astatus">Status</label><select id="astatus" name="status">
    ${[...APPROVAL_STATUSES, 'all'].map((s) => html`<option${s === (status ?? 'all') ? html` selected` : ''}>${s}</option>`)}
  </select></div>
  <div><button type="submit">Show</button></div>
</form>`,
  empty: () => 'No approvals here.',
};

/** GET /approvals: the queue, pending by default. */
function approvalQueue(routes: ConsoleRoutes): Handler {
  return statusListPage(routes, APPROVAL_LIST, listApprovals, (approvals, identity) =>
    approvalRows(approvals, identity, routes.deps.now()),
  );
}

/** What the approval is for, the rule and quorum it needs, and who initiated it (the maker). */
function approvalFields(approval: Approval, identity: ConsoleIdentity) {
  return fields([
    ['Status', statusBadge(approval.status)],
    ['For', html`${approval.resourceType} ${resourceLink(approval.resourceType, approval.resourceId)}`],
    ['Rule', `${approval.rule} (policy v${approval.policyVersion})`],
    [
      'Quorum',
      `${approval.quorum} approving vote${approval.quorum === 1 ? '' : 's'} from ${approval.roles.join(' or ')}${approval.distinctRoles ? ', from at least two roles' : ''}`,
    ],
    [
      'Initiated by (maker)',
      approval.initiatedBy === identity.member.id
        ? html`<strong>you</strong> (<code>${approval.initiatedBy}</code>)`
        : html`<code>${approval.initiatedBy}</code>`,
    ],
    ['Expires', time(approval.expiresAt)],
    ['Decided', time(approval.decidedAt)],
  ]);
}

/** The member's vote: the form, with a role to vote as when they hold several the rule names. */
function voteForm(approval: Approval, identity: ConsoleIdentity, formKey: string) {
  const eligibleRoles = identity.member.roles.filter((r) => approval.roles.includes(r));
  return html`<form method="post" action="${SECTION}/${approval.id}/vote" class="stack narrow">
  ${writeFormFields(identity, formKey)}
  <label for="comment">Comment <span class="hint">(kept with your vote and in the evidence)</span></label>
  <textarea id="comment" name="comment" rows="3" maxlength="${APPROVAL_COMMENT_CHARS_MAX}"></textarea>
  ${
    eligibleRoles.length > 1
      ? html`<label for="role">Vote as</label><select id="role" name="role">${eligibleRoles.map((r) => html`<option>${r}</option>`)}</select>`
      : ''
  }
  <div class="actions">
    <button type="submit" name="decision" value="approve">Approve</button>
    <button type="submit" name="decision" value="reject" class="danger" data-confirm="Reject this approval? One rejection rejects it.">Reject</button>
  </div>
</form>`;
}

/** GET /approvals/:id: the approval, its votes (the checkers), and the member's vote or why they cannot. */
function approvalPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const approval = await getApproval(routes.deps, identity.organizationId, request.params.id ?? '');
    const presented = presentApproval(approval);
    const refusal = voteRefusal(approval, consoleVoter(identity), routes.deps.now());
    const formKey = routes.formKey();
    return routes.render(reply, {
      title: `Approval ${approval.id}`,
      identity,
      section: SECTION,
      notice: noticeOf(request.query),
      body: html`${approvalFields(approval, identity)}
<h2>Votes (checkers)</h2>
${table(
  'Votes cast, in order',
  ['Member', 'Role', 'Decision', 'Comment', 'When'],
  approval.votes.map((v) => [v.email, v.role, statusBadge(v.decision), v.comment ?? '—', time(v.createdAt)]),
  'No votes yet.',
)}
<h2>Your vote</h2>
${refusal !== undefined ? html`<p class="role-note">${refusal.detail}</p>` : voteForm(approval, identity, formKey)}
<details><summary>As the API returns it</summary><pre class="json">${JSON.stringify(presented, null, 2)}</pre></details>`,
    });
  };
}

/** The vote a form asks for: a decision, and the role to vote as when it names one. */
function voteOf(body: unknown): { decision: VoteDecision; role: MemberRole | undefined } {
  const decision = field(body, 'decision');
  if (decision !== 'approve' && decision !== 'reject') {
    throw validationError('decision', 'Choose approve or reject.', 'invalid_value');
  }
  const role = field(body, 'role');
  if (role !== undefined && oneOf(MEMBER_ROLES, role) === undefined) {
    throw validationError('role', `'${role}' is not a role.`, 'invalid_value');
  }
  return { decision, role: role as MemberRole | undefined };
}

/** POST /approvals/:id/vote: approves or rejects, as the API's vote does. */
function vote(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const { decision, role } = voteOf(request.body);
    const comment = optionalNote(field(request.body, 'comment'), 'comment', APPROVAL_COMMENT_CHARS_MAX);
    const id = request.params.id ?? '';
    await recordOrganizationWrite(routes, request, identity, 200, voteOnApproval, presentApproval, [
      id,
      decision,
      { comment, role },
      consoleVoter(identity),
      consoleActor(identity),
    ]);
    return redirectWithNotice(reply, `${SECTION}/${id}`, 'voted');
  };
}

export function approvalPages(routes: ConsoleRoutes): void {
  routes.get('/approvals', 'read', approvalQueue(routes));
  routes.get('/approvals/:id', 'read', approvalPage(routes));
  routes.post('/approvals/:id/vote', 'read', vote(routes));
}
