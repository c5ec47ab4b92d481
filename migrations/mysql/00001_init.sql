-- +goose Up
-- Times are BIGINT epoch milliseconds (UTC) in both dialects: one encoding,
-- no driver time-zone surprises, integer comparisons in every index.
CREATE TABLE show_info (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(200) NOT NULL,
  venue VARCHAR(200) NOT NULL DEFAULT '',
  starts_at BIGINT NOT NULL,
  row_count INT NOT NULL,
  col_count INT NOT NULL,
  created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE seat (
  show_id BIGINT NOT NULL,
  seat_id VARCHAR(16) NOT NULL,
  row_no INT NOT NULL,
  col_no INT NOT NULL,
  price_cents BIGINT NOT NULL,
  PRIMARY KEY (show_id, seat_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE order_info (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no VARCHAR(40) NOT NULL,
  show_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  status TINYINT NOT NULL,          -- 0 pending, 1 paid, 2 cancelled
  amount_cents BIGINT NOT NULL,
  seat_count INT NOT NULL,
  seat_ids VARCHAR(2048) NOT NULL DEFAULT '', -- the order's seats as placed, comma-separated; kept after cancel
  created_at BIGINT NOT NULL,
  expire_at BIGINT NOT NULL,
  closed_at BIGINT NOT NULL DEFAULT 0,
  cancel_reason VARCHAR(64) NOT NULL DEFAULT '',
  cancel_actor VARCHAR(128) NOT NULL DEFAULT '',
  paid_txn_id VARCHAR(64) NOT NULL DEFAULT '',
  timeout_hop INT NOT NULL DEFAULT 0,
  timeout_due_at BIGINT NOT NULL DEFAULT 0,
  UNIQUE KEY uk_order_no (order_no),
  KEY idx_status_expire (status, expire_at),   -- expired-pending sweep, pending-holds page
  KEY idx_status_closed (status, closed_at),   -- dashboard counts of paid/cancelled since
  KEY idx_show_status (show_id, status),
  KEY idx_user_show (user_id, show_id),
  KEY idx_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- A seat is taken iff a row exists here: UNIQUE(show_id, seat_id) is the
-- last line of defence against selling one seat twice.
CREATE TABLE order_seat (
  show_id BIGINT NOT NULL,
  seat_id VARCHAR(16) NOT NULL,
  order_no VARCHAR(40) NOT NULL,
  user_id BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (show_id, seat_id),
  KEY idx_order_no (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE payment (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  txn_id VARCHAR(64) NOT NULL,
  order_no VARCHAR(40) NOT NULL,
  amount_cents BIGINT NOT NULL,
  paid_at BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  result VARCHAR(32) NOT NULL DEFAULT '',
  UNIQUE KEY uk_txn (txn_id),
  KEY idx_order_no (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE order_event (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no VARCHAR(40) NOT NULL,
  at BIGINT NOT NULL,
  kind VARCHAR(32) NOT NULL,
  detail TEXT NOT NULL,             -- JSON object
  KEY idx_order (order_no, id),
  KEY idx_kind_at (kind, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE discrepancy (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no VARCHAR(40) NOT NULL,
  txn_id VARCHAR(64) NOT NULL,
  kind VARCHAR(32) NOT NULL,
  amount_cents BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  status VARCHAR(16) NOT NULL DEFAULT 'open',
  resolved_at BIGINT NOT NULL DEFAULT 0,
  resolved_by VARCHAR(128) NOT NULL DEFAULT '',
  note TEXT NOT NULL,
  UNIQUE KEY uk_txn_kind (txn_id, kind),
  KEY idx_status_created (status, created_at),
  KEY idx_order_no (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The embedded durable delay queue (used when SEATFLOW_MQ=embedded).
CREATE TABLE delay_task (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_no VARCHAR(40) NOT NULL,
  hop INT NOT NULL,
  trace_id VARCHAR(64) NOT NULL DEFAULT '',
  due_at BIGINT NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  claimed_by VARCHAR(64) NOT NULL DEFAULT '',
  claimed_until BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  KEY idx_due (due_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE delay_task;
DROP TABLE discrepancy;
DROP TABLE order_event;
DROP TABLE payment;
DROP TABLE order_seat;
DROP TABLE order_info;
DROP TABLE seat;
DROP TABLE show_info;
