-- A payer's payment a partner reported is credited only once the partner itself confirms it (its callbacks
-- are not signed: anyone who learns the callback address could POST a confirmation). A claimed payment now
-- waits `verifying` until the partner's answer credits it (`applied`), or refuses it (`unverified`: not
-- found, another amount or another receiver, or no answer within the window; an exception names it). A
-- payment we accepted at validation is claimed `unconfirmed` then, so that one whose confirmation never
-- comes is asked about too (and closed `unverified` without an exception if it never happened). The
-- verification worker claims due rows by `next_check_at`; `query_reference` is the partner's id for the last
-- question we asked, which a genuine answer echoes. Rows claimed before this migration were credited at once.
ALTER TABLE rail_partner_credits
  ADD COLUMN status text NOT NULL DEFAULT 'applied' CHECK (status IN ('unconfirmed', 'verifying', 'applied', 'unverified'));
ALTER TABLE rail_partner_credits ADD COLUMN config_id text REFERENCES rail_partner_configs (id);
ALTER TABLE rail_partner_credits ADD COLUMN query_reference text;
ALTER TABLE rail_partner_credits ADD COLUMN verification_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE rail_partner_credits ADD COLUMN next_check_at timestamptz;
CREATE INDEX IF NOT EXISTS rail_partner_credits_due_idx
  ON rail_partner_credits (next_check_at) WHERE next_check_at IS NOT NULL;
