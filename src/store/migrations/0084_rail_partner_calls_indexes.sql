-- The lists of GET /v1/rail-partner-calls, newest first by id within an organization: all of them (and a
-- created range, through the id bounds), or one transfer's, one partner configuration's, one operation's.
CREATE INDEX IF NOT EXISTS rail_partner_calls_organization_idx
  ON rail_partner_calls (organization_id, id);
CREATE INDEX IF NOT EXISTS rail_partner_calls_transfer_idx
  ON rail_partner_calls (organization_id, transfer_id, id) WHERE transfer_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS rail_partner_calls_partner_idx
  ON rail_partner_calls (organization_id, rail_partner_id, id);
CREATE INDEX IF NOT EXISTS rail_partner_calls_operation_idx
  ON rail_partner_calls (organization_id, operation, id);
