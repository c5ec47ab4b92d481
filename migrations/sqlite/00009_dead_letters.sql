-- +goose Up
-- Dead letters (issue 12 defect 7): timeout messages whose handler failed
-- SEATFLOW_TIMEOUT_MAX_ATTEMPTS times. The DB queue moves its task here in
-- the transaction that deletes it from delay_task; RocketMQ's are consumed
-- from the group's %DLQ% topic. Times are BIGINT epoch milliseconds (UTC).
-- msg_key is the broker's message id (NULL for DB-queue tasks): a DLQ
-- message delivered twice is stored once.
CREATE TABLE dead_letter (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  msg_key TEXT NULL,
  source TEXT NOT NULL,
  order_no TEXT NOT NULL,
  hop INT NOT NULL,
  trace_id TEXT NOT NULL DEFAULT '',
  payload TEXT NOT NULL,
  attempts INT NOT NULL,
  last_error TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX dead_letter_uk_msg_key ON dead_letter (msg_key);
CREATE INDEX dead_letter_idx_created ON dead_letter (created_at);

-- +goose Down
DROP TABLE dead_letter;
