-- +goose Up
-- One-time password reset links (issue 13): an admin creates one instead of
-- typing a password for someone. Only the SHA-256 of the link's token is
-- stored; a link works once (used_at) and until expires_at. Times are epoch
-- milliseconds; 0 = not used.
CREATE TABLE password_reset (
  token_hash CHAR(64) NOT NULL PRIMARY KEY,
  staff_id BIGINT NOT NULL,
  created_by VARCHAR(128) NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT NOT NULL DEFAULT 0,
  KEY idx_staff (staff_id) -- a new link replaces the account's older ones
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE password_reset;
