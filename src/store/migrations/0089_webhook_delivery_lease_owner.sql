-- The dispatcher that holds a delivery's lease. A dispatcher queues several rounds of a subscription's
-- deliveries and sends them at the in-flight limit; the claim gives none of a subscription's rows to a
-- dispatcher while another holds live leases on it, and tops up the holder's queue. Cleared whenever a
-- row leaves `delivering`. Expand only: the previous release neither writes nor reads it, and its claims
-- count every live lease against the limit as before.
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS lease_owner text;
