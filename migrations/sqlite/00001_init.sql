-- +goose Up
-- Times are BIGINT epoch milliseconds (UTC) in both dialects: one encoding,
-- no driver time-zone surprises, integer comparisons in every index.
CREATE TABLE show_info (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  venue TEXT NOT NULL DEFAULT '',
  starts_at BIGINT NOT NULL,
  row_count INT NOT NULL,
  col_count INT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE seat (
  show_id BIGINT NOT NULL,
  seat_id TEXT NOT NULL,
  row_no INT NOT NULL,
  col_no INT NOT NULL,
  price_cents BIGINT NOT NULL,
  PRIMARY KEY (show_id, seat_id)
);

CREATE TABLE order_info (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL,
  show_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  status INTEGER NOT NULL,          -- 0 pending, 1 paid, 2 cancelled
  amount_cents BIGINT NOT NULL,
  seat_count INT NOT NULL,
  seat_ids TEXT NOT NULL DEFAULT '', -- the order's seats as placed, comma-separated; kept after cancel
  created_at BIGINT NOT NULL,
  expire_at BIGINT NOT NULL,
  closed_at BIGINT NOT NULL DEFAULT 0,
  cancel_reason TEXT NOT NULL DEFAULT '',
  cancel_actor TEXT NOT NULL DEFAULT '',
  paid_txn_id TEXT NOT NULL DEFAULT '',
  timeout_hop INT NOT NULL DEFAULT 0,
  timeout_due_at BIGINT NOT NULL DEFAULT 0
);

-- A seat is taken iff a row exists here: UNIQUE(show_id, seat_id) is the
-- last line of defence against selling one seat twice.
CREATE TABLE order_seat (
  show_id BIGINT NOT NULL,
  seat_id TEXT NOT NULL,
  order_no TEXT NOT NULL,
  user_id BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (show_id, seat_id)
);

CREATE TABLE payment (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  txn_id TEXT NOT NULL,
  order_no TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  paid_at BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  result TEXT NOT NULL DEFAULT ''
);

CREATE TABLE order_event (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL,
  at BIGINT NOT NULL,
  kind TEXT NOT NULL,
  detail TEXT NOT NULL              -- JSON object
);

CREATE TABLE discrepancy (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL,
  txn_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  status TEXT NOT NULL DEFAULT 'open',
  resolved_at BIGINT NOT NULL DEFAULT 0,
  resolved_by TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL
);

-- The embedded durable delay queue (used when SEATFLOW_MQ=embedded).
CREATE TABLE delay_task (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  order_no TEXT NOT NULL,
  hop INT NOT NULL,
  trace_id TEXT NOT NULL DEFAULT '',
  due_at BIGINT NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  claimed_by TEXT NOT NULL DEFAULT '',
  claimed_until BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX order_info_uk_order_no ON order_info (order_no);
CREATE INDEX order_info_idx_status_expire ON order_info (status, expire_at); -- expired-pending sweep, pending-holds page
CREATE INDEX order_info_idx_status_closed ON order_info (status, closed_at); -- dashboard counts of paid/cancelled since
CREATE INDEX order_info_idx_show_status ON order_info (show_id, status);
CREATE INDEX order_info_idx_user_show ON order_info (user_id, show_id);
CREATE INDEX order_info_idx_created ON order_info (created_at);
CREATE INDEX order_seat_idx_order_no ON order_seat (order_no);
CREATE UNIQUE INDEX payment_uk_txn ON payment (txn_id);
CREATE INDEX payment_idx_order_no ON payment (order_no);
CREATE INDEX order_event_idx_order ON order_event (order_no, id);
CREATE INDEX order_event_idx_kind_at ON order_event (kind, at);
CREATE UNIQUE INDEX discrepancy_uk_txn_kind ON discrepancy (txn_id, kind);
CREATE INDEX discrepancy_idx_status_created ON discrepancy (status, created_at);
CREATE INDEX discrepancy_idx_order_no ON discrepancy (order_no);
CREATE INDEX delay_task_idx_due ON delay_task (due_at);

-- +goose Down
DROP TABLE delay_task;
DROP TABLE discrepancy;
DROP TABLE order_event;
DROP TABLE payment;
DROP TABLE order_seat;
DROP TABLE order_info;
DROP TABLE seat;
DROP TABLE show_info;
