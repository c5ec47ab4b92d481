-- +goose Up
-- A console session unused for SEATFLOW_SESSION_IDLE is over (issue 13).
-- last_seen_at (epoch ms) is the session's last recorded use, written at
-- most once a minute per session so a busy console does not write on every
-- request. Sessions open at the upgrade count as used when they began.
ALTER TABLE staff_session ADD COLUMN last_seen_at BIGINT NOT NULL DEFAULT 0;
UPDATE staff_session SET last_seen_at = created_at;

-- +goose Down
ALTER TABLE staff_session DROP COLUMN last_seen_at;
