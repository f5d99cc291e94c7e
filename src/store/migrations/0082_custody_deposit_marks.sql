-- Where each custody partner configuration's next look for missed deposits starts: the creation time after
-- which Fireblocks' transaction history is read, kept between passes so an outage longer than the window
-- is caught up and a burst larger than one pass's pages is read over several passes.
CREATE TABLE IF NOT EXISTS custody_deposit_marks (
  config_id     text PRIMARY KEY REFERENCES rail_partner_configs (id),
  read_after    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
