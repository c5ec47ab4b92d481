-- +goose Up
-- API keys with scopes (issue 13). Only the SHA-256 of a key is stored, so a
-- leaked table or backup does not let anyone call the API; prefix is the
-- key's first characters, shown to tell keys apart. scopes is a
-- comma-separated list (orders:read, orders:write, shows:write, reconcile,
-- refunds). Times are epoch milliseconds; 0 = never used / not revoked.
CREATE TABLE api_key (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  prefix VARCHAR(16) NOT NULL,
  key_hash CHAR(64) NOT NULL,
  scopes VARCHAR(255) NOT NULL,
  created_by VARCHAR(128) NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL DEFAULT 0,
  revoked_at BIGINT NOT NULL DEFAULT 0,
  UNIQUE KEY api_key_hash (key_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE api_key;
