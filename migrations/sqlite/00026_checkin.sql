-- +goose Up
-- Check-in (issue 32); see migrations/mysql/00026_checkin.sql.
ALTER TABLE order_seat ADD COLUMN checked_in_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_seat ADD COLUMN checkin_gate TEXT NOT NULL DEFAULT '';
ALTER TABLE order_seat ADD COLUMN checkin_actor TEXT NOT NULL DEFAULT '';
ALTER TABLE order_seat ADD COLUMN checkin_scan TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE order_seat DROP COLUMN checkin_scan;
ALTER TABLE order_seat DROP COLUMN checkin_actor;
ALTER TABLE order_seat DROP COLUMN checkin_gate;
ALTER TABLE order_seat DROP COLUMN checked_in_at;
