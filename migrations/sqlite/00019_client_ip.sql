-- +goose Up
-- The end-user address an order was placed from (issue 13's abuse limits):
-- the API caps the holds one address has open on one show. '' for orders
-- from the console, tests and before this migration. The index serves the
-- count of one address's pending orders on a show.
ALTER TABLE order_info ADD COLUMN client_ip TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_show_client ON order_info (show_id, client_ip, status);

-- +goose Down
DROP INDEX idx_show_client;
ALTER TABLE order_info DROP COLUMN client_ip;
