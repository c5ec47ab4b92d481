-- +goose Up
-- The storefront's webhook outbox (issue 33). The engine inserts an event
-- in the transaction of the change it reports (core.WebhookTx), so a
-- rolled-back change never sends one; core/webhook's dispatchers POST the
-- rows and mark them. Times are BIGINT epoch milliseconds (UTC).
--
-- payload is the request body exactly as sent, so every attempt of an
-- event carries the same bytes. next_attempt_at is 0 for a new row (due at
-- once on every instance's clock); a dispatcher claims a due row by moving
-- it forward past its request's timeout, and on a failure sets it to the
-- backoff's end. delivered_at is NULL until a 2xx answer: idx_due serves
-- the dispatchers' scan of undelivered due rows (delivered_at IS NULL), the
-- backlog count, and retention's delete of rows delivered long ago.
CREATE TABLE webhook_outbox (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  event_id VARCHAR(64) NOT NULL,
  kind VARCHAR(64) NOT NULL,
  payload TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  next_attempt_at BIGINT NOT NULL DEFAULT 0,
  attempts INT NOT NULL DEFAULT 0,
  delivered_at BIGINT NULL,
  last_error VARCHAR(512) NOT NULL DEFAULT '',
  UNIQUE KEY uk_event_id (event_id),
  KEY idx_due (delivered_at, next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE webhook_outbox;
