package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"seatflow/core/access"
)

// embeddedTOTPKeyFile is where the embedded stack keeps the key of its
// second factors when SEATFLOW_TOTP_KEY is not set: beside its SQLite file,
// as readable as that file (the server's user only).
const embeddedTOTPKeyFile = "totp.key"

// openTOTPKeys gives the store the key second-factor secrets are sealed
// with and seals the ones that are not under it (stored in clear before
// secrets were sealed, or under a previous key). Without a key the
// embedded stack makes one beside its database; a real one starts without
// second factors only while no account has one and none is required.
func (a *App) openTOTPKeys(ctx context.Context) error {
	key, prev := a.cfg.TOTPKey, a.cfg.TOTPKeysPrevious
	if key == nil && strings.HasPrefix(a.cfg.DB, "sqlite://") {
		var err error
		if key, err = embeddedTOTPKey(a.cfg.DB); err != nil {
			return fmt.Errorf("SEATFLOW_TOTP_KEY: not set, and %w", err)
		}
	}
	if key == nil {
		n, err := a.DB.CountTOTP(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("SEATFLOW_DB: %w", err)
		case n > 0:
			return fmt.Errorf("SEATFLOW_TOTP_KEY: not set, and %d accounts have a second factor stored: set it (or SEATFLOW_TOTP_KEY_FILE) to the key they are sealed with", n)
		case a.cfg.RequireSecondFactor != access.SecondFactorOptional:
			return fmt.Errorf("SEATFLOW_TOTP_KEY: not set, but SEATFLOW_REQUIRE_2FA=%s needs second factors: set it to 32 random bytes in base64 (openssl rand -base64 32)", a.cfg.RequireSecondFactor)
		}
		a.logger.WarnContext(ctx, "SEATFLOW_TOTP_KEY is not set: two-step sign-in cannot be set up")
		return nil
	}
	keys, err := access.NewTOTPKeys(key, prev...)
	if err != nil {
		return fmt.Errorf("SEATFLOW_TOTP_KEY: %w", err)
	}
	a.DB.SetTOTPKeys(keys)
	n, err := a.DB.SealTOTPSecrets(ctx)
	if err != nil {
		return fmt.Errorf("SEATFLOW_TOTP_KEY: sealing the stored second factors: %w", err)
	}
	if n > 0 {
		a.logger.InfoContext(ctx, "sealed second-factor secrets under the current key", "count", n, "key_id", keys.Current())
	}
	return nil
}

// embeddedTOTPKey reads the key file beside the SQLite database of dsn, or
// writes a new one; an in-memory database gets a key as short-lived as it.
func embeddedTOTPKey(dsn string) ([]byte, error) {
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "sqlite://"), "?")
	if path == ":memory:" {
		return access.ParseTOTPKey(access.NewTOTPKey())
	}
	file := filepath.Join(filepath.Dir(path), embeddedTOTPKeyFile)
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("making %s: %w", file, err)
		}
		k := access.NewTOTPKey()
		_, werr := f.WriteString(k + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("making %s: %w", file, err)
		}
		return access.ParseTOTPKey(k)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	key, err := access.ParseTOTPKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return key, nil
}
