-- +goose Up
-- An optional TOTP second factor per console account (issue 13), and the
-- sign-ins waiting for their code. confirmed_at = 0: offered, not yet
-- confirmed with a code, so logins do not ask for it. last_step: the newest
-- 30 s step a code was accepted for (a code works once). A login challenge
-- is kept by the SHA-256 of its token, like a session, so any instance can
-- finish a sign-in another began; tries bounds the codes guessed for it.
CREATE TABLE staff_totp (
  staff_id INTEGER NOT NULL PRIMARY KEY,
  secret TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  confirmed_at BIGINT NOT NULL DEFAULT 0,
  last_step BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE login_challenge (
  token_hash TEXT NOT NULL PRIMARY KEY,
  staff_id INTEGER NOT NULL,
  next_url TEXT NOT NULL DEFAULT '',
  expires_at BIGINT NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX login_challenge_expires ON login_challenge (expires_at);

-- +goose Down
DROP TABLE login_challenge;
DROP TABLE staff_totp;
