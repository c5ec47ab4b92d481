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
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  reason TEXT NOT NULL,
  reference TEXT NOT NULL DEFAULT '',
  actor TEXT NOT NULL DEFAULT '',
  requested_by TEXT NOT NULL,
  approved_by TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  decided_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX refund_idx_order_no ON refund (order_no);
CREATE INDEX refund_idx_state_created ON refund (state, created_at);

-- +goose Down
DROP TABLE refund;
