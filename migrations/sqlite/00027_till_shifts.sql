-- +goose Up
-- Shifts at the till (issue 32); see migrations/mysql/00027_till_shifts.sql.
CREATE TABLE till_shift (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  clerk TEXT NOT NULL,
  open_clerk TEXT NULL UNIQUE,
  currency TEXT NOT NULL,
  float_cents INTEGER NOT NULL,
  opened_at INTEGER NOT NULL,
  closed_at INTEGER NOT NULL DEFAULT 0,
  counted_cents INTEGER NOT NULL DEFAULT 0,
  expected_cents INTEGER NOT NULL DEFAULT 0,
  difference_cents INTEGER NOT NULL DEFAULT 0,
  case_id INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_till_shift_opened ON till_shift (opened_at);
CREATE INDEX idx_till_shift_clerk_opened ON till_shift (clerk, opened_at);
ALTER TABLE payment ADD COLUMN shift_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_payment_shift ON payment (shift_id);
ALTER TABLE refund ADD COLUMN shift_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refund ADD COLUMN tender TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_refund_shift ON refund (shift_id);

-- +goose Down
DROP INDEX idx_refund_shift;
ALTER TABLE refund DROP COLUMN tender;
ALTER TABLE refund DROP COLUMN shift_id;
DROP INDEX idx_payment_shift;
ALTER TABLE payment DROP COLUMN shift_id;
DROP TABLE till_shift;
