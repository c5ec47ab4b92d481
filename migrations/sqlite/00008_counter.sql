-- +goose Up
-- Counter sales (issue 11): a payment row says how the money came in.
-- method: callback (the payment provider's callback) | counter (taken by a
-- clerk at the box office); tender: cash | card for counter payments;
-- reference: the card terminal's slip number or the clerk's note; actor:
-- who took it (staff:<username>), empty for callbacks.
ALTER TABLE payment ADD COLUMN method TEXT NOT NULL DEFAULT 'callback';
ALTER TABLE payment ADD COLUMN tender TEXT NOT NULL DEFAULT '';
ALTER TABLE payment ADD COLUMN reference TEXT NOT NULL DEFAULT '';
ALTER TABLE payment ADD COLUMN actor TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment DROP COLUMN actor;
ALTER TABLE payment DROP COLUMN reference;
ALTER TABLE payment DROP COLUMN tender;
ALTER TABLE payment DROP COLUMN method;
