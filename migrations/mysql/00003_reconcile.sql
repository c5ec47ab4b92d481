-- +goose Up
-- Reconcile: the record of every run, the lease that keeps runs to one
-- instance at a time, and the indexes its checks read through. Times are
-- BIGINT epoch milliseconds (UTC), as in 00001.

-- One row per run. `checks` is a JSON array, one object per check:
-- {"name", "found", "fixed", "errors", "error", "duration_ms", "items": [...]}
-- with items capped to a small sample; the console reads it whole.
CREATE TABLE reconcile_run (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  run_trigger VARCHAR(16) NOT NULL,   -- schedule | manual | cli | sweep (TRIGGER is a reserved word)
  owner VARCHAR(128) NOT NULL DEFAULT '', -- the instance that ran it
  started_at BIGINT NOT NULL,
  finished_at BIGINT NOT NULL DEFAULT 0, -- 0 while running (or if the runner died)
  dry_run TINYINT NOT NULL DEFAULT 0,
  status VARCHAR(16) NOT NULL,        -- running | ok | errors | aborted | abandoned
  checks MEDIUMTEXT NOT NULL,
  error TEXT NOT NULL,
  KEY idx_started (started_at),       -- newest runs first; pruning old runs
  KEY idx_status_started (status, started_at) -- runs left "running" by a dead instance
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The reconcile lease: one row per lease name, seeded here so taking the
-- lease is a single conditional UPDATE (no insert race). expires_at is set
-- from the database's clock, so instances with skewed clocks agree on it.
CREATE TABLE reconcile_lease (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  owner VARCHAR(128) NOT NULL DEFAULT '',
  token VARCHAR(64) NOT NULL DEFAULT '',
  expires_at BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT INTO reconcile_lease (name, owner, token, expires_at) VALUES ('reconcile', '', '', 0);

-- show_info is a small catalogue, but the seat-level checks pick the shows
-- still on sale by start time; an index keeps that a range read.
CREATE INDEX idx_starts ON show_info (starts_at);

-- +goose Down
DROP INDEX idx_starts ON show_info;
DROP TABLE reconcile_lease;
DROP TABLE reconcile_run;
