-- +goose Up
-- Timeout chain edges (issue 12 defect 6): the claim of a hop records
-- whether its message is known to be sent, so a crash between the claim and
-- the send is seen and the hop resent. timeout_send: 0 sent (or nothing to
-- send), 1 claimed and not yet confirmed sent, 2 deferred by an early
-- delivery; timeout_resend_at (unix ms): from when a redelivery or the
-- reconcile sweep may send it instead of its claimer.
ALTER TABLE order_info ADD COLUMN timeout_send INTEGER NOT NULL DEFAULT 0;
ALTER TABLE order_info ADD COLUMN timeout_resend_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX order_info_idx_timeout_send ON order_info (timeout_send, status, timeout_resend_at);

-- +goose Down
DROP INDEX order_info_idx_timeout_send;
ALTER TABLE order_info DROP COLUMN timeout_resend_at;
ALTER TABLE order_info DROP COLUMN timeout_send;
