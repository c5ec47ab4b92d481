-- +goose Up
-- The order page links the discrepancy cases of its order.
CREATE INDEX idx_discrepancy_order ON discrepancy (order_no);

-- +goose Down
DROP INDEX idx_discrepancy_order ON discrepancy;
