-- +goose Up
-- The console's staff accounts, their sessions and the audit log. Times are
-- BIGINT epoch milliseconds (UTC), as in 00001.
CREATE TABLE staff (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username TEXT NOT NULL,
  password_hash TEXT NOT NULL,          -- bcrypt
  role TEXT NOT NULL,                   -- box_office | ops | admin
  created_at BIGINT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0
);

-- Only the SHA-256 of a session token is stored: a leaked table or backup
-- does not let anyone log in.
CREATE TABLE staff_session (
  token_hash TEXT NOT NULL PRIMARY KEY,
  staff_id BIGINT NOT NULL,
  csrf_token TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  ip TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT ''
);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at BIGINT NOT NULL,
  staff TEXT NOT NULL,
  role TEXT NOT NULL DEFAULT '',
  action TEXT NOT NULL,
  target TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL,                 -- JSON object
  ip TEXT NOT NULL DEFAULT ''
);

CREATE UNIQUE INDEX staff_uk_username ON staff (username);
CREATE INDEX staff_session_idx_staff ON staff_session (staff_id);     -- drop a disabled account's sessions
CREATE INDEX staff_session_idx_expires ON staff_session (expires_at); -- purge expired sessions
CREATE INDEX audit_log_idx_at ON audit_log (at);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE staff_session;
DROP TABLE staff;
