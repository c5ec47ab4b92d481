-- +goose Up
-- Best available (issue 30). A seat's accessible kind (accessible_kind:
-- ACCESSIBLE is reserved in MySQL) ('', wheelchair,
-- companion), the plan's rank (0: none, scored by distance to the focal
-- point) and whether the next seat of its row is across an aisle. The
-- show's rules: a focal point when best_focal_set (else the stage centre
-- of the plan) and whether stranded single seats are allowed.
ALTER TABLE seat
  ADD COLUMN accessible_kind VARCHAR(16) NOT NULL DEFAULT '',
  ADD COLUMN seat_rank INT NOT NULL DEFAULT 0,
  ADD COLUMN aisle_after TINYINT NOT NULL DEFAULT 0;

ALTER TABLE show_info
  ADD COLUMN best_focal_set TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN best_focal_x INT NOT NULL DEFAULT 0,
  ADD COLUMN best_focal_y INT NOT NULL DEFAULT 0,
  ADD COLUMN best_allow_singles TINYINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE show_info
  DROP COLUMN best_allow_singles,
  DROP COLUMN best_focal_y,
  DROP COLUMN best_focal_x,
  DROP COLUMN best_focal_set;
ALTER TABLE seat
  DROP COLUMN aisle_after,
  DROP COLUMN seat_rank,
  DROP COLUMN accessible_kind;
