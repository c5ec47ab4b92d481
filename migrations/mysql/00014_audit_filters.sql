-- +goose Up
-- The audit log is filtered by person, action and target (an order, a show,
-- a case), newest first: one index each, ending in the id it pages by.
CREATE INDEX idx_audit_staff ON audit_log (staff, id);
CREATE INDEX idx_audit_action ON audit_log (action, id);
CREATE INDEX idx_audit_target ON audit_log (target, id);

-- +goose Down
DROP INDEX idx_audit_target ON audit_log;
DROP INDEX idx_audit_action ON audit_log;
DROP INDEX idx_audit_staff ON audit_log;
