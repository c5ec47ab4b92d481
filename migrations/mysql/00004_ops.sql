-- +goose Up
-- Ops features (issue 7): discrepancy cases and their history. Times are
-- BIGINT epoch milliseconds (UTC), as in 00001.

-- A discrepancy is a case: state open → refund_requested → refunded |
-- refund_failed | written_off (the machine is core/discrepancy.go), an
-- owner (the staff member who took it) and a history. The old `status`
-- column stays, as the case's summary: 'resolved' iff the state is final
-- (refunded, written_off), 'open' otherwise, so the reconcile report and
-- the dashboard keep counting unresolved money. resolved_at/resolved_by/note
-- keep describing the close.
ALTER TABLE discrepancy
  ADD COLUMN state VARCHAR(24) NOT NULL DEFAULT 'open',
  ADD COLUMN owner VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;

-- Until now "resolved" meant "refunded outside, noted here" (the console
-- asked ops to refund and then resolve): those cases are refunded.
UPDATE discrepancy SET state = 'refunded', updated_at = resolved_at WHERE status = 'resolved';

-- The ops queue: a state, oldest first.
CREATE INDEX idx_state_created ON discrepancy (state, created_at);

-- One row per change of a case: taken, moved, annotated.
CREATE TABLE discrepancy_event (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  discrepancy_id BIGINT NOT NULL,
  at BIGINT NOT NULL,
  staff VARCHAR(64) NOT NULL,
  action VARCHAR(16) NOT NULL,        -- take | move | note
  from_state VARCHAR(24) NOT NULL,
  to_state VARCHAR(24) NOT NULL,
  note TEXT NOT NULL,
  KEY idx_discrepancy (discrepancy_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The history of the cases resolved before there was one.
INSERT INTO discrepancy_event (discrepancy_id, at, staff, action, from_state, to_state, note)
  SELECT id, resolved_at, resolved_by, 'move', 'open', 'refunded', note FROM discrepancy WHERE status = 'resolved';

-- +goose Down
DROP TABLE discrepancy_event;
DROP INDEX idx_state_created ON discrepancy;
ALTER TABLE discrepancy DROP COLUMN updated_at, DROP COLUMN owner, DROP COLUMN state;
