-- +goose Up
-- An optional TOTP second factor per console account (issue 13), and the
-- sign-ins waiting for their code. confirmed_at = 0: offered, not yet
-- confirmed with a code, so logins do not ask for it. last_step: the newest
-- 30 s step a code was accepted for (a code works once). A login challenge
-- is kept by the SHA-256 of its token, like a session, so any instance can
-- finish a sign-in another began; tries bounds the codes guessed for it.
CREATE TABLE staff_totp (
  staff_id BIGINT NOT NULL PRIMARY KEY,
  secret VARCHAR(64) NOT NULL,
  created_at BIGINT NOT NULL,
  confirmed_at BIGINT NOT NULL DEFAULT 0,
  last_step BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE login_challenge (
  token_hash CHAR(64) NOT NULL PRIMARY KEY,
  staff_id BIGINT NOT NULL,
  next_url VARCHAR(512) NOT NULL DEFAULT '',
  expires_at BIGINT NOT NULL,
  tries INT NOT NULL DEFAULT 0,
  KEY idx_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE login_challenge;
DROP TABLE staff_totp;
