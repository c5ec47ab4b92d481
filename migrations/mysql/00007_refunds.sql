-- +goose Up
-- Refunds (issue 11): order status 3 (refunded) and one row per refund or
-- refund request. Times are BIGINT epoch milliseconds (UTC), as in 00001.
--
-- state: requested (a box-office request above SEATFLOW_REFUND_APPROVAL_CENTS,
-- waiting for ops; the order is unchanged) → refunded | rejected |
-- superseded (the order was refunded by another row meanwhile). A direct
-- refund is inserted as refunded. The order row's conditional update
-- (status 1 → 3) decides the one refund of an order, not this table.
CREATE TABLE refund (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no VARCHAR(40) NOT NULL,
  amount_cents BIGINT NOT NULL,
  reason VARCHAR(500) NOT NULL,
  reference VARCHAR(128) NOT NULL DEFAULT '', -- the payment provider's refund reference
  actor VARCHAR(128) NOT NULL DEFAULT '',     -- who ran the transition (or decided the request)
  requested_by VARCHAR(128) NOT NULL,
  approved_by VARCHAR(128) NOT NULL DEFAULT '',
  state VARCHAR(16) NOT NULL,
  note VARCHAR(500) NOT NULL DEFAULT '',      -- why a request was rejected
  created_at BIGINT NOT NULL,
  decided_at BIGINT NOT NULL DEFAULT 0,
  KEY idx_order_no (order_no),
  KEY idx_state_created (state, created_at)   -- the console's list of requests
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE refund;
