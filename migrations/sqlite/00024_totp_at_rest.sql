-- +goose Up
-- Second factors hardened (issue 28 item 9). The secret is stored
-- encrypted (AES-256-GCM, base64 of nonce and sealed text) under the key
-- named by key_id; '' marks a secret stored in clear before this
-- migration, which the server encrypts when it starts. Wrong codes count
-- here, so every instance shares the count: failed_codes since
-- failed_since; past the limit the factor is locked until locked_until,
-- and lockouts (since the last right code) doubles the next lock.
ALTER TABLE staff_totp ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE staff_totp ADD COLUMN failed_codes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE staff_totp ADD COLUMN failed_since BIGINT NOT NULL DEFAULT 0;
ALTER TABLE staff_totp ADD COLUMN locked_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE staff_totp ADD COLUMN lockouts INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE staff_totp DROP COLUMN lockouts;
ALTER TABLE staff_totp DROP COLUMN locked_until;
ALTER TABLE staff_totp DROP COLUMN failed_since;
ALTER TABLE staff_totp DROP COLUMN failed_codes;
ALTER TABLE staff_totp DROP COLUMN key_id;
