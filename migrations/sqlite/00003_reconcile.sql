-- +goose Up
-- Reconcile: the record of every run, the lease that keeps runs to one
-- instance at a time, and the indexes its checks read through. Times are
-- BIGINT epoch milliseconds (UTC), as in 00001.

-- One row per run. `checks` is a JSON array, one object per check:
-- {"name", "found", "fixed", "errors", "error", "duration_ms", "items": [...]}
-- with items capped to a small sample; the console reads it whole.
CREATE TABLE reconcile_run (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_trigger TEXT NOT NULL,          -- schedule | manual | cli | sweep (TRIGGER is a reserved word)
  owner TEXT NOT NULL DEFAULT '',     -- the instance that ran it
  started_at BIGINT NOT NULL,
  finished_at BIGINT NOT NULL DEFAULT 0, -- 0 while running (or if the runner died)
  dry_run INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,               -- running | ok | errors | aborted | abandoned
  checks TEXT NOT NULL,
  error TEXT NOT NULL
);
CREATE INDEX reconcile_run_idx_started ON reconcile_run (started_at); -- newest runs first; pruning old runs
CREATE INDEX reconcile_run_idx_status_started ON reconcile_run (status, started_at); -- runs left "running" by a dead instance

-- The reconcile lease: one row per lease name, seeded here so taking the
-- lease is a single conditional UPDATE (no insert race). expires_at is set
-- from the database's clock, so instances with skewed clocks agree on it.
CREATE TABLE reconcile_lease (
  name TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL DEFAULT '',
  token TEXT NOT NULL DEFAULT '',
  expires_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO reconcile_lease (name, owner, token, expires_at) VALUES ('reconcile', '', '', 0);

-- show_info is a small catalogue, but the seat-level checks pick the shows
-- still on sale by start time; an index keeps that a range read.
CREATE INDEX show_info_idx_starts ON show_info (starts_at);

-- +goose Down
DROP INDEX show_info_idx_starts;
DROP TABLE reconcile_lease;
DROP TABLE reconcile_run;
