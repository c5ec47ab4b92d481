-- +goose Up
-- The audit log is filtered by person, action and target (an order, a show,
-- a case), newest first: one index each, ending in the id it pages by.
CREATE INDEX audit_log_idx_staff ON audit_log (staff, id);
CREATE INDEX audit_log_idx_action ON audit_log (action, id);
CREATE INDEX audit_log_idx_target ON audit_log (target, id);

-- +goose Down
DROP INDEX audit_log_idx_target;
DROP INDEX audit_log_idx_action;
DROP INDEX audit_log_idx_staff;
