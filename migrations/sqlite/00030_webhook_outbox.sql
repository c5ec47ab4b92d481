-- +goose Up
-- The storefront's webhook outbox (issue 33); see migrations/mysql/00030_webhook_outbox.sql.
CREATE TABLE webhook_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  delivered_at INTEGER NULL,
  last_error TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX webhook_outbox_uk_event_id ON webhook_outbox (event_id);
CREATE INDEX webhook_outbox_idx_due ON webhook_outbox (delivered_at, next_attempt_at);

-- +goose Down
DROP TABLE webhook_outbox;
