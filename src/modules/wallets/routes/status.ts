/** A wallet's status changes: freeze and unfreeze (operators) and close. */

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import type { Scope } from '../../../domain/access.ts';
import {
  WALLET_CLOSE_REASONS,
  WALLET_FREEZE_REASONS,
  WALLET_STATUS_NOTE_LENGTH_MAX,
  WALLET_UNFREEZE_REASONS,
} from '../../../domain/wallets.ts';
import { actionOnId } from '../../../http/routeEffects.ts';
import { closedObjectSchema, written } from '../../../http/routeKit.ts';
import { writeRoute } from '../../../http/writeRoutes.ts';
import { changeWalletStatus, type WalletStatusAction, type WalletStatusChange } from '../useCases/status.ts';
import { presentWallet } from './presenters.ts';
import { WALLET_TAGS, walletParams } from './routes.ts';

const ROUTES: {
  action: WalletStatusAction;
  scope: Scope;
  reasons: readonly string[];
  operationId: string;
  summary: string;
  description: string;
}[] = [
  {
    action: 'freeze',
    scope: 'compliance',
    reasons: WALLET_FREEZE_REASONS,
    operationId: 'freezeWallet',
    summary: 'Freeze a wallet',
    description:
      'An operator action (the `compliance` scope). A frozen wallet neither sends nor receives: new transfers from it and internal transfers to it are refused with 409 `wallet_not_active`, money a rail delivers for it is held for review; a return of its own earlier payment is still credited, and transfers it made before the freeze finish as the rail reports. Recorded as evidence; emits `wallet.frozen`.',
  },
  {
    action: 'unfreeze',
    scope: 'compliance',
    reasons: WALLET_UNFREEZE_REASONS,
    operationId: 'unfreezeWallet',
    summary: 'Unfreeze a wallet',
    description:
      'An operator action (the `compliance` scope): the wallet is active again. Recorded as evidence; emits `wallet.unfrozen`.',
  },
  {
    action: 'close',
    scope: 'write',
    reasons: WALLET_CLOSE_REASONS,
    operationId: 'closeWallet',
    summary: 'Close a wallet',
    description:
      'Closes an active wallet for good. Only an empty wallet closes: a balance or anything pending is a 409 `wallet_not_empty`; a frozen wallet is a 409 `invalid_state_transition` until it is unfrozen. Recorded as evidence; emits `wallet.closed`.',
  },
];

/** The body of a status change: the reason, one of the action's, and a note for the evidence. */
function statusChangeBody(reasons: readonly string[]) {
  return closedObjectSchema(
    {
      reason: { type: 'string', enum: reasons, description: 'Why; recorded on the wallet and as evidence.' },
      note: {
        type: 'string',
        minLength: 1,
        maxLength: WALLET_STATUS_NOTE_LENGTH_MAX,
        description: 'Free text for the evidence record (a case reference, an order number).',
      },
    },
    ['reason'],
  );
}

/** Freeze, unfreeze and close: status changes with a reason, each an idempotent write. */
export function walletStatusRoutes(app: FastifyInstance, deps: Deps): void {
  for (const { action, reasons, ...operation } of ROUTES) {
    writeRoute<{ Params: { id: string }; Body: WalletStatusChange }>(
      app,
      deps,
      'POST',
      `/v1/wallets/:id/${action}`,
      200,
      actionOnId(deps, action, (body: WalletStatusChange) => body, changeWalletStatus, presentWallet),
      {
        ...operation,
        tags: WALLET_TAGS,
        params: walletParams,
        body: statusChangeBody(reasons),
        responses: { 200: written('Wallet', 'The wallet after the change.') },
      },
    );
  }
}
