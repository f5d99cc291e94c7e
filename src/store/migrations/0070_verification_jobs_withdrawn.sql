-- A job whose organization removed its Smile ID configuration while it was in flight is `withdrawn`: its
-- key is destroyed, so it is neither sent nor polled, and its verification waits for an operator.
ALTER TABLE verification_jobs DROP CONSTRAINT IF EXISTS verification_jobs_state_check;
ALTER TABLE verification_jobs ADD CONSTRAINT verification_jobs_state_check
  CHECK (state IN ('submitting', 'submitted', 'decided', 'refused', 'withdrawn'));
