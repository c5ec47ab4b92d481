-- +goose Up
-- The console's staff accounts, their sessions and the audit log. Times are
-- BIGINT epoch milliseconds (UTC), as in 00001.
CREATE TABLE staff (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  username VARCHAR(64) NOT NULL,
  password_hash VARCHAR(100) NOT NULL,  -- bcrypt
  role VARCHAR(16) NOT NULL,            -- box_office | ops | admin
  created_at BIGINT NOT NULL,
  disabled TINYINT NOT NULL DEFAULT 0,
  UNIQUE KEY uk_username (username)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Only the SHA-256 of a session token is stored: a leaked table or backup
-- does not let anyone log in.
CREATE TABLE staff_session (
  token_hash CHAR(64) NOT NULL PRIMARY KEY,
  staff_id BIGINT NOT NULL,
  csrf_token CHAR(64) NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  ip VARCHAR(64) NOT NULL DEFAULT '',
  user_agent VARCHAR(255) NOT NULL DEFAULT '',
  KEY idx_staff (staff_id),             -- drop a disabled account's sessions
  KEY idx_expires (expires_at)          -- purge expired sessions
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE audit_log (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at BIGINT NOT NULL,
  staff VARCHAR(64) NOT NULL,
  role VARCHAR(16) NOT NULL DEFAULT '',
  action VARCHAR(32) NOT NULL,
  target VARCHAR(128) NOT NULL DEFAULT '',
  detail TEXT NOT NULL,                 -- JSON object
  ip VARCHAR(64) NOT NULL DEFAULT '',
  KEY idx_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE audit_log;
DROP TABLE staff_session;
DROP TABLE staff;
