-- A transfer that waited for an approval or a review and no longer passes the posting module's release gate
-- when it is let go (a wallet frozen or closed meanwhile) fails there: its hold is voided and
-- `transfer.failed` emitted, as for any other failure. Mirrors TRANSFER_TRANSITIONS in src/domain/transfers.ts.
INSERT INTO transfer_status_transitions (from_status, to_status) VALUES
  ('pending_approval', 'failed'), ('in_review', 'failed')
ON CONFLICT DO NOTHING;
