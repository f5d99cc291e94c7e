-- A call to the verification provider is recorded as rail partners' calls are (0083): inserted `sent` before
-- its request leaves, then completed with its outcome, so a process killed in between leaves the row `sent`.
-- `at` is when the request was sent (a callback: when it was received); `answered_at` when the call's answer
-- or failure was recorded. Expand only: the previous release writes the four outcomes it knows, and reads on.
ALTER TABLE verification_provider_calls DROP CONSTRAINT IF EXISTS verification_provider_calls_outcome_check;
ALTER TABLE verification_provider_calls ADD CONSTRAINT verification_provider_calls_outcome_check
  CHECK (outcome IN ('sent', 'accepted', 'refused', 'timeout', 'error'));
ALTER TABLE verification_provider_calls ADD COLUMN IF NOT EXISTS answered_at timestamptz;
