-- A refused or failed sweep of an asset wallet is not tried again before `retry_after`: without it, a sweep
-- Fireblocks keeps refusing (no asset wallet in the payout vault) would make a failed row every pass.
-- `attempt` counts the asset wallet's failed sweeps in a row, this one included once it fails; the wait grows with it.
ALTER TABLE custody_sweeps ADD COLUMN IF NOT EXISTS attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1);
ALTER TABLE custody_sweeps ADD COLUMN IF NOT EXISTS retry_after timestamptz;
-- The asset wallets still waiting, read once a pass.
CREATE INDEX IF NOT EXISTS custody_sweeps_waiting_idx ON custody_sweeps (config_id, retry_after)
  WHERE status = 'failed' AND retry_after IS NOT NULL;
-- An asset wallet's latest sweep, read when a new one is made.
CREATE INDEX IF NOT EXISTS custody_sweeps_asset_wallet_idx
  ON custody_sweeps (config_id, vault_account_id, asset_id, created_at DESC);
