/**
 * A partner simulator's `afterAnswer` hook that SIGKILLs an armed `mkoba worker` once the partner has
 * answered 200 to `method path` (the request that creates the payout or job): the worker has the
 * acceptance on its socket but has not recorded it. As `beforeAnswer`, the same kill once the partner has
 * accepted and before any of its answer leaves: the worker cannot have recorded the answer.
 */
import type http from 'node:http';
import type { MkobaProcess } from './mkobaProcess.ts';

export function killOnAcceptance(method: string, path: string) {
  let victim: MkobaProcess | undefined;
  let killed = false;
  const kill = (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (killed || victim === undefined) return;
    if (request.method !== method || request.url !== path || response.statusCode !== 200) return;
    killed = true;
    victim.child.kill('SIGKILL');
  };
  return {
    arm: (worker: MkobaProcess) => {
      victim = worker;
    },
    killed: () => killed,
    afterAnswer: kill,
    beforeAnswer: kill,
  };
}
