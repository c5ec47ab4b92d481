-- +goose Up
-- Shows and seat plans (issue 11, part 1); see migrations/mysql/00005_shows.sql.
ALTER TABLE show_info ADD COLUMN currency TEXT NOT NULL DEFAULT 'EUR';
ALTER TABLE show_info ADD COLUMN sales_end BIGINT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN status INT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN cancelled_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN plan_version INT NOT NULL DEFAULT 1;
ALTER TABLE show_info ADD COLUMN seat_count INT NOT NULL DEFAULT 0;
UPDATE show_info SET seat_count = (SELECT COUNT(*) FROM seat WHERE seat.show_id = show_info.id);

ALTER TABLE seat ADD COLUMN section TEXT NOT NULL DEFAULT '';
ALTER TABLE seat ADD COLUMN row_label TEXT NOT NULL DEFAULT '';
ALTER TABLE seat ADD COLUMN seat_number INT NOT NULL DEFAULT 0;
ALTER TABLE seat ADD COLUMN category TEXT NOT NULL DEFAULT '';
ALTER TABLE seat ADD COLUMN x INT NOT NULL DEFAULT 0;
ALTER TABLE seat ADD COLUMN y INT NOT NULL DEFAULT 0;

CREATE TABLE price_category (
  show_id BIGINT NOT NULL,
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  price_cents BIGINT NOT NULL,
  PRIMARY KEY (show_id, code)
);

CREATE TABLE seat_block (
  show_id BIGINT NOT NULL,
  seat_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (show_id, seat_id)
);

-- +goose Down
DROP TABLE seat_block;
DROP TABLE price_category;
ALTER TABLE seat DROP COLUMN section;
ALTER TABLE seat DROP COLUMN row_label;
ALTER TABLE seat DROP COLUMN seat_number;
ALTER TABLE seat DROP COLUMN category;
ALTER TABLE seat DROP COLUMN x;
ALTER TABLE seat DROP COLUMN y;
ALTER TABLE show_info DROP COLUMN currency;
ALTER TABLE show_info DROP COLUMN sales_end;
ALTER TABLE show_info DROP COLUMN status;
ALTER TABLE show_info DROP COLUMN cancelled_at;
ALTER TABLE show_info DROP COLUMN plan_version;
ALTER TABLE show_info DROP COLUMN seat_count;
