-- +goose Up
-- The waiting list (issue 33). Seats an ended hold lets go are handed to
-- the next matching entry as a pending order of its own (source
-- 'waitlist'), in the transaction that ends the hold. Times are BIGINT
-- epoch milliseconds (UTC), as in 00001.
ALTER TABLE order_info ADD COLUMN source VARCHAR(16) NOT NULL DEFAULT '';

-- One row per show that has a list. join_when: 'sold_out' (joins only
-- while no seat is on sale) or 'always'.
CREATE TABLE waitlist_setting (
  show_id BIGINT NOT NULL PRIMARY KEY,
  enabled TINYINT NOT NULL DEFAULT 0,
  join_when VARCHAR(16) NOT NULL DEFAULT 'sold_out',
  offer_ttl_ms BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- An entry is offered at most once: state waiting → offered (order_no
-- names the offer's order; accepted or expired is that order's status) or
-- withdrawn. user_id is NULL for a walk-in a clerk adds (no account; the
-- offer is a counter hold), so UNIQUE(show_id, user_id) keeps one entry
-- per user and show and any number of walk-ins.
CREATE TABLE waitlist_entry (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  token VARCHAR(40) NOT NULL,
  show_id BIGINT NOT NULL,
  user_id BIGINT NULL,
  seat_count INT NOT NULL,
  category VARCHAR(16) NOT NULL DEFAULT '',
  together TINYINT NOT NULL DEFAULT 0,
  customer_name VARCHAR(100) NOT NULL DEFAULT '',
  customer_email VARCHAR(254) NOT NULL DEFAULT '',
  customer_phone VARCHAR(20) NOT NULL DEFAULT '',
  added_by VARCHAR(128) NOT NULL DEFAULT '',
  state VARCHAR(12) NOT NULL,
  order_no VARCHAR(40) NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  offered_at BIGINT NOT NULL DEFAULT 0,
  withdrawn_at BIGINT NOT NULL DEFAULT 0,
  UNIQUE KEY uk_token (token),
  UNIQUE KEY uk_show_user (show_id, user_id),
  KEY idx_show_state (show_id, state, id),
  KEY idx_order_no (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE waitlist_entry;
DROP TABLE waitlist_setting;
ALTER TABLE order_info DROP COLUMN source;
