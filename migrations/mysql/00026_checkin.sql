-- +goose Up
-- Check-in (issue 32). A ticket is a seat of a paid order, so its admission
-- lives on the order_seat row: checked_in_at is 0 until the one conditional
-- UPDATE ... WHERE checked_in_at = 0 that admits it (core/checkin). gate
-- and actor say where and by whom; scan is the admitting scan's random id,
-- so a scan of several seats knows which rows it won. A refund or cancel
-- deletes the rows, and with them the admission.
ALTER TABLE order_seat
  ADD COLUMN checked_in_at BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN checkin_gate VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN checkin_actor VARCHAR(128) NOT NULL DEFAULT '',
  ADD COLUMN checkin_scan VARCHAR(32) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE order_seat
  DROP COLUMN checkin_scan,
  DROP COLUMN checkin_actor,
  DROP COLUMN checkin_gate,
  DROP COLUMN checked_in_at;
