-- +goose Up
-- Shifts at the till (issue 32). A clerk opens a shift with a float; every
-- counter payment, and every refund of a counter sale, run by that clerk
-- carries the open shift's id, written in the money's own transaction, so
-- the till's expected cash is a sum over the ledger and can never disagree
-- with it. Times are BIGINT epoch milliseconds (UTC), as in 00001.
--
-- open_clerk is the clerk while the shift is open and NULL once closed:
-- its UNIQUE key allows one open shift per clerk (NULLs never clash).
-- case_id: the discrepancy case a difference over
-- SEATFLOW_TILL_TOLERANCE_CENTS opened (0: none).
CREATE TABLE till_shift (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  clerk VARCHAR(128) NOT NULL,
  open_clerk VARCHAR(128) NULL,
  currency CHAR(3) NOT NULL,
  float_cents BIGINT NOT NULL,
  opened_at BIGINT NOT NULL,
  closed_at BIGINT NOT NULL DEFAULT 0,
  counted_cents BIGINT NOT NULL DEFAULT 0,
  expected_cents BIGINT NOT NULL DEFAULT 0,
  difference_cents BIGINT NOT NULL DEFAULT 0,
  case_id BIGINT NOT NULL DEFAULT 0,
  UNIQUE KEY uk_open_clerk (open_clerk),
  KEY idx_opened (opened_at),
  KEY idx_clerk_opened (clerk, opened_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- tender on refund: what the money went back in (the counter payment's).
ALTER TABLE payment ADD COLUMN shift_id BIGINT NOT NULL DEFAULT 0, ADD KEY idx_shift (shift_id);
ALTER TABLE refund ADD COLUMN shift_id BIGINT NOT NULL DEFAULT 0, ADD COLUMN tender VARCHAR(8) NOT NULL DEFAULT '',
  ADD KEY idx_shift (shift_id);

-- +goose Down
ALTER TABLE refund DROP KEY idx_shift, DROP COLUMN tender, DROP COLUMN shift_id;
ALTER TABLE payment DROP KEY idx_shift, DROP COLUMN shift_id;
DROP TABLE till_shift;
