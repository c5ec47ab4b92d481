-- +goose Up
-- One-time password reset links (issue 13): an admin creates one instead of
-- typing a password for someone. Only the SHA-256 of the link's token is
-- stored; a link works once (used_at) and until expires_at. Times are epoch
-- milliseconds; 0 = not used.
CREATE TABLE password_reset (
  token_hash TEXT NOT NULL PRIMARY KEY,
  staff_id INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX password_reset_staff ON password_reset (staff_id);

-- +goose Down
DROP TABLE password_reset;
