/**
 * The approvable resource most owners supply (payment batches, loans, policy changes): the resource's own
 * row locked by reading it FOR UPDATE, then moved on by the owner's decision once its approval is decided.
 */
import type { ApprovalResourceType } from '../domain/approvals.ts';
import type { Queryable } from '../store/store.ts';
import type { ApprovableResource, LockedResource } from './deps.ts';

/** A repository's read of one record by id that can lock its row for the reading transaction. */
type FindForUpdate = (
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean },
) => Promise<unknown>;

/** `type`'s resource, locked through `find` and settled by `settle` (which reads it again, locked). */
export function rowLockedApprovableResource<T extends ApprovalResourceType>(
  type: T,
  find: FindForUpdate,
  settle: LockedResource['settle'],
): ApprovableResource & { type: T } {
  return {
    type,
    async lock(tx, organizationId, resourceId) {
      await find(tx, organizationId, resourceId, { forUpdate: true });
      return { settle };
    },
  };
}
