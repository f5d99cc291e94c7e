-- A delivery queued again by hand (redeliver, recover) starts a fresh retry schedule: the schedule counts
-- attempts after attempts_before_requeue. Attempt numbers themselves keep growing, so the log stays whole.
ALTER TABLE webhook_deliveries ADD COLUMN attempts_before_requeue integer NOT NULL DEFAULT 0;
