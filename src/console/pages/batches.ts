/** Payment batches and each batch's items with their results; a running batch can be canceled (`write`). */
import { type ConsoleIdentity, consoleActor } from '../../app/console/session.ts';
import { type PartyNames, partyNames } from '../../app/console/views.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  cancelPaymentBatch,
  getPaymentBatch,
  isFinishedBatch,
  listBatches,
  listBatchItems,
  PAYMENT_BATCH_ITEM_STATUSES,
  type PaymentBatchItemStatus,
  presentItem,
  presentPaymentBatch,
} from '../../modules/paymentBatches/index.ts';
import { html } from '../html.ts';
import {
  CONSOLE_PREFIX,
  can,
  fields,
  idLink,
  nextPageLink,
  roleNote,
  statusBadge,
  table,
  time,
  walletCell,
  writeFormFields,
} from '../layout.ts';
import { noticeOf, redirectWithNotice } from '../notices.ts';
import {
  CONSOLE_LIST_ROWS,
  type ConsoleRoutes,
  type Handler,
  idOfKind,
  oneOf,
  recordWrite,
} from '../routing.ts';
import { destinationCell } from './transfers.ts';

/** Items a batch's page shows at once (paged by row). */
export const CONSOLE_BATCH_ITEM_ROWS = 100;
const SECTION = `${CONSOLE_PREFIX}/batches`;

type PaymentBatchRecord = Awaited<ReturnType<typeof getPaymentBatch>>;
type PresentedBatch = ReturnType<typeof presentPaymentBatch>;
type BatchItems = Awaited<ReturnType<typeof listBatchItems>>;

/** GET /batches: the organization's payment batches, newest first. */
function batchList(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const page = await listBatches(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      startingAfter: idOfKind(q.after, ID_PREFIXES.paymentBatch),
    });
    return routes.render(reply, {
      title: 'Payment batches',
      identity,
      section: SECTION,
      body: html`${table(
        'Payment batches, newest first',
        ['Batch', 'Reference', 'Total', 'Items', 'Succeeded', 'Failed', 'Status', 'Created'],
        page.data
          .map(presentPaymentBatch)
          .map((b) => [
            idLink(SECTION, b.id),
            b.reference,
            html`<span class="num">${String(b.total)}</span> ${b.currency}`,
            b.items,
            b.succeeded,
            b.failed,
            statusBadge(b.status),
            time(b.created_at),
          ]),
        'No payment batches yet. Submit one with mkoba batches submit or POST /v1/payment-batches.',
      )}${nextPageLink(SECTION, {}, page)}`,
    });
  };
}

/** The batch's totals, counts, approval and times. */
function batchFields(b: PresentedBatch, names: PartyNames) {
  return fields([
    ['Id', html`<code>${b.id}</code>`],
    ['Status', html`${statusBadge(b.status)} ${b.failure_code ?? ''}`],
    ['Source wallet', walletCell(names, b.source)],
    ['Total', html`<span class="num">${String(b.total)}</span> ${b.currency} (fees ${b.fees})`],
    ['Items', `${b.items}: ${b.succeeded} succeeded, ${b.failed} failed, ${b.canceled} canceled`],
    ['Approval', idLink(`${CONSOLE_PREFIX}/approvals`, b.approval)],
    ['Created', time(b.created_at)],
    ['Finished', time(b.finished_at)],
  ]);
}

/** A running batch's cancel button for a writer, a note for anyone else; nothing once it finished. */
function cancelControl(routes: ConsoleRoutes, identity: ConsoleIdentity, batch: PaymentBatchRecord) {
  return isFinishedBatch(batch.status)
    ? ''
    : can(identity, 'write')
      ? html`<form method="post" action="${SECTION}/${batch.id}/cancel">${writeFormFields(identity, routes.formKey())}
          <button type="submit" class="danger" data-confirm="Cancel this batch? Items not yet paid are canceled.">Cancel batch</button></form>`
      : roleNote(identity, 'write', 'cancel it');
}

/** The items in row order, each with its result. */
function itemsTable(batch: PaymentBatchRecord, items: BatchItems, names: PartyNames) {
  const present = presentItem(batch.currency);
  return table(
    'Items in row order, with each result',
    ['Row', 'Reference', 'Destination', 'Amount', 'Status', 'Transfer', 'Failure'],
    items.data
      .map(present)
      .map((i) => [
        i.row,
        i.reference,
        destinationCell(names, i.destination as Record<string, unknown>),
        html`<span class="num">${i.amount}</span>`,
        statusBadge(i.status),
        idLink(`${CONSOLE_PREFIX}/transfers`, i.transfer),
        i.failure_code ? html`<code>${i.failure_code}</code> ${i.failure_detail ?? ''}` : '—',
      ]),
    'No items match.',
  );
}

/** The link to the next rows, after the last shown, keeping the status filter. */
function nextRowsLink(batchId: string, items: BatchItems, status: PaymentBatchItemStatus | undefined) {
  const last = items.data.at(-1);
  return items.hasMore && last
    ? html`<p class="pager"><a rel="next" href="${SECTION}/${batchId}?${new URLSearchParams({ ...(status ? { status } : {}), after: String(last.position) }).toString()}">Next rows</a></p>`
    : '';
}

/** GET /batches/:id: the batch and its items, filterable by item status and paged by row. */
function batchPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const batch = await getPaymentBatch(routes.deps, identity.organizationId, request.params.id ?? '');
    const status = oneOf(PAYMENT_BATCH_ITEM_STATUSES, q.status);
    const afterRow = q.after && /^\d{1,9}$/.test(q.after) ? Number(q.after) : undefined;
    const items = await listBatchItems(routes.deps, identity.organizationId, batch.id, {
      limit: CONSOLE_BATCH_ITEM_ROWS,
      status,
      afterPosition: afterRow,
    });
    const names = await partyNames(routes.deps, identity.organizationId, {
      wallets: [batch.sourceWalletId, ...items.data.map((i) => i.destinationWalletId)],
    });
    const b = presentPaymentBatch(batch);
    return routes.render(reply, {
      title: `Batch ${b.reference}`,
      identity,
      section: SECTION,
      notice: noticeOf(q),
      body: html`${batchFields(b, names)}
${cancelControl(routes, identity, batch)}
<h2>Items</h2>
<form method="get" action="${SECTION}/${b.id}" class="search" aria-label="Filter items">
  <div><label for="istatus">Item status</label><select id="istatus" name="status"><option value="">Any</option>
    ${PAYMENT_BATCH_ITEM_STATUSES.map((s) => html`<option${s === status ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><button type="submit">Filter</button></div>
</form>
${itemsTable(batch, items, names)}${nextRowsLink(b.id, items, status)}`,
    });
  };
}

/** POST /batches/:id/cancel: cancels a running batch (items not yet paid). */
function cancelBatch(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const id = request.params.id ?? '';
    await recordWrite(routes, request, identity, 200, async (tx) =>
      presentPaymentBatch(
        await cancelPaymentBatch(tx, routes.deps, identity.organizationId, id, consoleActor(identity)),
      ),
    );
    return redirectWithNotice(reply, `${SECTION}/${id}`, 'batch_canceled');
  };
}

export function batchPages(routes: ConsoleRoutes): void {
  routes.get('/batches', 'read', batchList(routes));
  routes.get('/batches/:id', 'read', batchPage(routes));
  routes.post('/batches/:id/cancel', 'write', cancelBatch(routes));
}
