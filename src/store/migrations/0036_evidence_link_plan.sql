-- The evidence link check looked its predecessor up by (organization, sequence, hash). A trigger's query
-- keeps its plan for the life of the connection, and one planned while the table was empty could pick an
-- index that serves only the organization (evidence_records_kind_idx, or the previous_hash key) and so read
-- every record of the organization on each insert: appends slowed as the chain grew, until an ANALYZE made
-- the connection plan again. The predecessor is now read by the (organization_id, sequence) key alone, its
-- hash compared here, and the query is planned for each call (a cached generic plan cannot go stale).
CREATE OR REPLACE FUNCTION mkoba_evidence_link_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  predecessor_hash text;
BEGIN
  IF NEW.sequence = 1 THEN
    IF NEW.previous_hash <> repeat('0', 64) THEN
      RAISE EXCEPTION 'evidence % is first in its chain but does not start from the genesis hash', NEW.id;
    END IF;
  ELSE
    SELECT r.hash INTO predecessor_hash FROM evidence_records r
     WHERE r.organization_id = NEW.organization_id AND r.sequence = NEW.sequence - 1;
    IF predecessor_hash IS DISTINCT FROM NEW.previous_hash THEN
      RAISE EXCEPTION 'evidence % does not link to record % of its chain', NEW.id, NEW.sequence - 1;
    END IF;
  END IF;
  RETURN NULL;
END;
$$;
ALTER FUNCTION mkoba_evidence_link_check() SET plan_cache_mode = force_custom_plan;

-- A prefix of transfers_rail_reference_search_idx (organization_id, rail_reference, id DESC) with the same
-- condition: every lookup by reference uses that one, and a rail transfer's insert maintains one index less.
DROP INDEX transfers_rail_reference_idx;
