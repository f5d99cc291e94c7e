/** Customers with their wallets, and wallets with their balances and recent transfers. */

import { type PartyNames, partyNames } from '../../app/console/views.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { type Currency, isCurrency, SUPPORTED_CURRENCIES } from '../../domain/money.ts';
import { PAGE_SIZE_MAX } from '../../domain/pagination.ts';
import { WALLET_STATUSES } from '../../domain/wallets.ts';
import { presentTransfer } from '../../http/presenters.ts';
import { getCustomer, listCustomers, presentCustomer } from '../../modules/customers/index.ts';
import { listTransfers } from '../../modules/transfers/index.ts';
import { getWallet, listWallets, presentWallet } from '../../modules/wallets/index.ts';
import { html } from '../html.ts';
import {
  CONSOLE_PREFIX,
  customerCell,
  fields,
  idLink,
  link,
  nextPageLink,
  statusBadge,
  table,
  time,
} from '../layout.ts';
import { CONSOLE_LIST_ROWS, type ConsoleRoutes, type Handler, idOfKind, oneOf } from '../routing.ts';
import { TRANSFER_HEADERS, transferRows, walletIdsOf } from './transfers.ts';

/** A wallet's page shows its latest transfers. */
const WALLET_TRANSFERS_ROWS = 20;

/** Wallet rows; with `names`, the owner's name and id beside each (a list across customers). */
function walletRows(wallets: ReturnType<typeof presentWallet>[], names?: PartyNames) {
  return wallets.map((w) => [
    idLink(`${CONSOLE_PREFIX}/wallets`, w.id),
    ...(names ? [customerCell(names, w.owner)] : []),
    w.currency,
    html`<span class="num">${w.balance.available}</span>`,
    html`<span class="num">${w.balance.pending}</span>`,
    html`<span class="num">${w.balance.current}</span>`,
    statusBadge(w.status),
  ]);
}

const WALLET_HEADERS = ['Wallet', 'Currency', 'Available', 'Pending', 'Current', 'Status'];
const WALLET_LIST_HEADERS = ['Wallet', 'Owner', ...WALLET_HEADERS.slice(1)];

/** GET /customers: customers, newest first. */
function customerList(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const page = await listCustomers(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      startingAfter: idOfKind(request.query.after, ID_PREFIXES.customer),
    });
    return routes.render(reply, {
      title: 'Customers',
      identity,
      section: `${CONSOLE_PREFIX}/customers`,
      body: html`${table(
        'Customers, newest first',
        ['Customer', 'Name', 'Type', 'KYC', 'Risk', 'Created'],
        page.data
          .map(presentCustomer)
          .map((c) => [
            idLink(`${CONSOLE_PREFIX}/customers`, c.id),
            c.name,
            c.type,
            statusBadge(c.kyc_status),
            c.risk_level,
            time(c.created_at),
          ]),
        'No customers yet.',
      )}${nextPageLink(`${CONSOLE_PREFIX}/customers`, {}, page)}`,
    });
  };
}

/** GET /customers/:id: the customer's KYC, tier and risk, and their wallets. */
function customerPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const customer = presentCustomer(
      await getCustomer(routes.deps, identity.organizationId, request.params.id ?? ''),
    );
    const wallets = await listWallets(routes.deps, identity.organizationId, {
      limit: PAGE_SIZE_MAX,
      ownerId: customer.id,
    });
    return routes.render(reply, {
      title: customer.name ?? customer.id,
      identity,
      section: `${CONSOLE_PREFIX}/customers`,
      body: html`${fields([
        ['Id', html`<code>${customer.id}</code>`],
        ['Type', customer.type],
        ['Email', customer.email],
        ['Phone', customer.phone],
        ['KYC status', statusBadge(customer.kyc_status)],
        ['Tier', String(customer.tier)],
        ['Risk level', `${customer.risk_level}${customer.risk_level_overridden ? ' (overridden)' : ''}`],
        ['Created', time(customer.created_at)],
      ])}
<h2>Wallets</h2>
${table('This customer’s wallets and balances', WALLET_HEADERS, walletRows(wallets.data.map(presentWallet)), 'No wallets.')}`,
    });
  };
}

/** GET /wallets: wallets with their owners and balances, filterable by currency and status. */
function walletList(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const currency = q.currency && isCurrency(q.currency) ? (q.currency as Currency) : undefined;
    const status = oneOf(WALLET_STATUSES, q.status);
    const page = await listWallets(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      currency,
      status,
      startingAfter: idOfKind(q.after, ID_PREFIXES.wallet),
    });
    const names = await partyNames(routes.deps, identity.organizationId, {
      customers: page.data.map((w) => w.ownerId),
    });
    return routes.render(reply, {
      title: 'Wallets',
      identity,
      section: `${CONSOLE_PREFIX}/wallets`,
      body: html`<form method="get" action="${CONSOLE_PREFIX}/wallets" class="search" aria-label="Filter wallets">
  <div><label for="currency">Currency</label><select id="currency" name="currency"><option value="">Any</option>
    ${SUPPORTED_CURRENCIES.map((c) => html`<option${c === currency ? html` selected` : ''}>${c}</option>`)}</select></div>
  <div><label for="wstatus">Status</label><select id="wstatus" name="status"><option value="">Any</option>
    ${WALLET_STATUSES.map((s) => html`<option${s === status ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><button type="submit">Filter</button></div>
</form>
${table('Wallets and balances, newest first', WALLET_LIST_HEADERS, walletRows(page.data.map(presentWallet), names), 'No wallets.')}
${nextPageLink(`${CONSOLE_PREFIX}/wallets`, { currency, status }, page)}`,
    });
  };
}

/** GET /wallets/:id: the wallet's balances and its latest transfers. */
function walletPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const wallet = presentWallet(
      await getWallet(routes.deps, identity.organizationId, request.params.id ?? ''),
    );
    const transfers = await listTransfers(routes.deps, identity.organizationId, {
      limit: WALLET_TRANSFERS_ROWS,
      walletId: wallet.id,
    });
    const names = await partyNames(routes.deps, identity.organizationId, {
      customers: [wallet.owner],
      wallets: walletIdsOf(transfers.data),
    });
    return routes.render(reply, {
      title: `Wallet ${wallet.id}`,
      identity,
      section: `${CONSOLE_PREFIX}/wallets`,
      body: html`${fields([
        ['Owner', customerCell(names, wallet.owner)],
        ['Currency', wallet.currency],
        ['Available', html`<span class="num">${wallet.balance.available}</span>`],
        ['Pending', html`<span class="num">${wallet.balance.pending}</span>`],
        ['Current', html`<span class="num">${wallet.balance.current}</span>`],
        ['Status', html`${statusBadge(wallet.status)} ${wallet.status_reason ?? ''}`],
      ])}
<p>${link(`${CONSOLE_PREFIX}/wallets/${wallet.id}/statement`, 'Statement')}</p>
<h2>Latest transfers</h2>
${table(
  'Transfers from or to this wallet, newest first',
  TRANSFER_HEADERS,
  transferRows(transfers.data.map(presentTransfer), names),
  'No transfers.',
)}`,
    });
  };
}

export function customerPages(routes: ConsoleRoutes): void {
  routes.get('/customers', 'read', customerList(routes));
  routes.get('/customers/:id', 'read', customerPage(routes));
  routes.get('/wallets', 'read', walletList(routes));
  routes.get('/wallets/:id', 'read', walletPage(routes));
}
