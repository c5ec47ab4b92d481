-- +goose Up
-- Counter sales (issue 11): a payment row says how the money came in.
-- method: callback (the payment provider's callback) | counter (taken by a
-- clerk at the box office); tender: cash | card for counter payments;
-- reference: the card terminal's slip number or the clerk's note; actor:
-- who took it (staff:<username>), empty for callbacks.
ALTER TABLE payment
  ADD COLUMN method VARCHAR(16) NOT NULL DEFAULT 'callback',
  ADD COLUMN tender VARCHAR(8) NOT NULL DEFAULT '',
  ADD COLUMN reference VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN actor VARCHAR(128) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payment DROP COLUMN method, DROP COLUMN tender, DROP COLUMN reference, DROP COLUMN actor;
