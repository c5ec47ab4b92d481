-- +goose Up
-- Dead letters (issue 12 defect 7): timeout messages whose handler failed
-- SEATFLOW_TIMEOUT_MAX_ATTEMPTS times. The DB queue moves its task here in
-- the transaction that deletes it from delay_task; RocketMQ's are consumed
-- from the group's %DLQ% topic. Times are BIGINT epoch milliseconds (UTC).
-- msg_key is the broker's message id (NULL for DB-queue tasks): a DLQ
-- message delivered twice is stored once.
CREATE TABLE dead_letter (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  msg_key VARCHAR(128) NULL,
  source VARCHAR(16) NOT NULL,          -- dbqueue | rocketmq
  order_no VARCHAR(40) NOT NULL,
  hop INT NOT NULL,
  trace_id VARCHAR(64) NOT NULL DEFAULT '',
  payload TEXT NOT NULL,                -- the message as delivered (JSON)
  attempts INT NOT NULL,
  last_error TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE KEY uk_msg_key (msg_key),
  KEY idx_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE dead_letter;
