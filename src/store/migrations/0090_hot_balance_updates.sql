-- Rows every transfer updates (wallet balances, customers' limit sums, pilot caps, evidence chain heads)
-- leave room on their page, so that an update writes its new version beside the old one (a HOT update)
-- instead of a new entry in each of the table's indexes. Pages written before this keep their layout until
-- their rows move.
ALTER TABLE ledger_accounts SET (fillfactor = 70);
ALTER TABLE customer_limit_usage SET (fillfactor = 70);
ALTER TABLE pilot_cap_usage SET (fillfactor = 70);
ALTER TABLE evidence_chain_heads SET (fillfactor = 70);
