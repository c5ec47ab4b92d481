-- +goose Up
-- Best available (issue 30); see migrations/mysql/00025_best_available.sql.
ALTER TABLE seat ADD COLUMN accessible_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE seat ADD COLUMN seat_rank INT NOT NULL DEFAULT 0;
ALTER TABLE seat ADD COLUMN aisle_after INT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN best_focal_set INT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN best_focal_x INT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN best_focal_y INT NOT NULL DEFAULT 0;
ALTER TABLE show_info ADD COLUMN best_allow_singles INT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE show_info DROP COLUMN best_allow_singles;
ALTER TABLE show_info DROP COLUMN best_focal_y;
ALTER TABLE show_info DROP COLUMN best_focal_x;
ALTER TABLE show_info DROP COLUMN best_focal_set;
ALTER TABLE seat DROP COLUMN aisle_after;
ALTER TABLE seat DROP COLUMN seat_rank;
ALTER TABLE seat DROP COLUMN accessible_kind;
