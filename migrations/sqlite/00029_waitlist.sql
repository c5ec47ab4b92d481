-- +goose Up
-- The waiting list (issue 33); see migrations/mysql/00029_waitlist.sql.
ALTER TABLE order_info ADD COLUMN source TEXT NOT NULL DEFAULT '';
CREATE TABLE waitlist_setting (
  show_id INTEGER NOT NULL PRIMARY KEY,
  enabled INTEGER NOT NULL DEFAULT 0,
  join_when TEXT NOT NULL DEFAULT 'sold_out',
  offer_ttl_ms INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE waitlist_entry (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token TEXT NOT NULL UNIQUE,
  show_id INTEGER NOT NULL,
  user_id INTEGER NULL,
  seat_count INTEGER NOT NULL,
  category TEXT NOT NULL DEFAULT '',
  together INTEGER NOT NULL DEFAULT 0,
  customer_name TEXT NOT NULL DEFAULT '',
  customer_email TEXT NOT NULL DEFAULT '',
  customer_phone TEXT NOT NULL DEFAULT '',
  added_by TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL,
  order_no TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  offered_at INTEGER NOT NULL DEFAULT 0,
  withdrawn_at INTEGER NOT NULL DEFAULT 0,
  UNIQUE (show_id, user_id)
);
CREATE INDEX idx_waitlist_entry_show_state ON waitlist_entry (show_id, state, id);
CREATE INDEX idx_waitlist_entry_order_no ON waitlist_entry (order_no);

-- +goose Down
DROP INDEX idx_waitlist_entry_order_no;
DROP INDEX idx_waitlist_entry_show_state;
DROP TABLE waitlist_entry;
DROP TABLE waitlist_setting;
ALTER TABLE order_info DROP COLUMN source;
