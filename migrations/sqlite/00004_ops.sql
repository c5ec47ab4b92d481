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
ALTER TABLE discrepancy ADD COLUMN state TEXT NOT NULL DEFAULT 'open';
ALTER TABLE discrepancy ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE discrepancy ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;

-- Until now "resolved" meant "refunded outside, noted here" (the console
-- asked ops to refund and then resolve): those cases are refunded.
UPDATE discrepancy SET state = 'refunded', updated_at = resolved_at WHERE status = 'resolved';

-- The ops queue: a state, oldest first.
CREATE INDEX discrepancy_idx_state_created ON discrepancy (state, created_at);

-- One row per change of a case: taken, moved, annotated.
CREATE TABLE discrepancy_event (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  discrepancy_id BIGINT NOT NULL,
  at BIGINT NOT NULL,
  staff TEXT NOT NULL,
  action TEXT NOT NULL,               -- take | move | note
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  note TEXT NOT NULL
);
CREATE INDEX discrepancy_event_idx_discrepancy ON discrepancy_event (discrepancy_id, id);

-- The history of the cases resolved before there was one.
INSERT INTO discrepancy_event (discrepancy_id, at, staff, action, from_state, to_state, note)
  SELECT id, resolved_at, resolved_by, 'move', 'open', 'refunded', note FROM discrepancy WHERE status = 'resolved';

-- +goose Down
DROP TABLE discrepancy_event;
DROP INDEX discrepancy_idx_state_created;
ALTER TABLE discrepancy DROP COLUMN updated_at;
ALTER TABLE discrepancy DROP COLUMN owner;
ALTER TABLE discrepancy DROP COLUMN state;
