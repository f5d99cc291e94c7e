import { describe, expect, it } from 'vitest';
import { AppError, requireBaseVersion } from '../src/domain/errors.ts';

describe('requireBaseVersion', () => {
  const conflict = {
    setting: 'fee schedule',
    code: 'fee_schedule_version_conflict',
    title: 'Fee schedule changed',
  } as const;

  it('passes a change with no base version or the current one', () => {
    expect(() => requireBaseVersion(conflict, 3, undefined)).not.toThrow();
    expect(() => requireBaseVersion(conflict, 3, 3)).not.toThrow();
  });

  it('refuses a change written against another version with a 409 naming base_version', () => {
    let thrown: unknown;
    try {
      requireBaseVersion(conflict, 3, 2);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({
      status: 409,
      code: 'fee_schedule_version_conflict',
      title: 'Fee schedule changed',
      detail: 'The fee schedule is at version 3, not 2; read it again and re-apply your change.',
      param: 'base_version',
    });
  });
});
