-- A closing balance read from the custodian (Fireblocks' vault balances) rather than entered from a
-- statement: which partner configuration was asked, the balance query that answered, and when it was read.
-- Operator-entered figures keep all three null.
ALTER TABLE safeguarding_balances ADD COLUMN IF NOT EXISTS source_config_id text REFERENCES rail_partner_configs (id);
ALTER TABLE safeguarding_balances ADD COLUMN IF NOT EXISTS source_query_id text REFERENCES rail_partner_balance_queries (id);
ALTER TABLE safeguarding_balances ADD COLUMN IF NOT EXISTS source_read_at timestamptz;
