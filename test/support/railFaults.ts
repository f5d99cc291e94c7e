/** Database-side faults for rail-worker tests: real refusals from the database, not mocks. */
import type { Store } from '../../src/store/store.ts';

/** The message of the refusal, as the worker logs it. */
export const REFUSED_REFERENCE_MESSAGE = 'refused by the test';

/**
 * Makes the database refuse to record a rail reference (for one transfer, or for all), so that recording
 * the rail's answer throws. Returns a function that lifts the refusal.
 */
export async function refuseRailReferences(store: Store, transferId?: string): Promise<() => Promise<void>> {
  const which = transferId === undefined ? 'TRUE' : `NEW.id = '${transferId.replace(/'/g, "''")}'`;
  await store.exec(`
    CREATE FUNCTION test_refuse_reference() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${which} AND NEW.rail_reference IS NOT NULL THEN
        RAISE EXCEPTION '${REFUSED_REFERENCE_MESSAGE}';
      END IF;
      RETURN NEW;
    END;
    $$;
    CREATE TRIGGER test_refuse_reference BEFORE UPDATE ON transfers
      FOR EACH ROW EXECUTE FUNCTION test_refuse_reference();
  `);
  return () =>
    store.exec('DROP TRIGGER test_refuse_reference ON transfers; DROP FUNCTION test_refuse_reference()');
}
