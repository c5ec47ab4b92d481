-- +goose Up
-- API keys with scopes (issue 13). Only the SHA-256 of a key is stored, so a
-- leaked table or backup does not let anyone call the API; prefix is the
-- key's first characters, shown to tell keys apart. scopes is a
-- comma-separated list (orders:read, orders:write, shows:write, reconcile,
-- refunds). Times are epoch milliseconds; 0 = never used / not revoked.
CREATE TABLE api_key (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  scopes TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL DEFAULT 0,
  revoked_at BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX api_key_hash ON api_key (key_hash);

-- +goose Down
DROP TABLE api_key;
