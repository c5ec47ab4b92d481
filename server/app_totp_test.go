package server

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
	"seatflow/core/testenv"
)

// TestTOTPKeysAtStart: the server seals the second-factor secrets stored
// in clear before they were sealed, and those of a previous key after a
// rotation; the embedded stack makes its key file when none is set; a real
// one without a key refuses to start once an account has a factor.
func TestTOTPKeysAtStart(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	keyA, keyB := access.NewTOTPKey(), access.NewTOTPKey()
	open := func(t *testing.T, env map[string]string) (*App, error) {
		t.Helper()
		cfg, err := LoadConfig(mapEnv(env))
		if err != nil {
			t.Fatal(err)
		}
		app, err := OpenApp(context.Background(), cfg, NewLogger(io.Discard, 0))
		if err == nil {
			t.Cleanup(func() { app.Close() })
		}
		return app, err
	}
	// stored reads the row as the database keeps it.
	stored := func(t *testing.T, app *App, id int64) (sealed, keyID string) {
		t.Helper()
		row := app.DB.X().QueryRow(`SELECT secret, key_id FROM staff_totp WHERE staff_id = ?`, id)
		if err := row.Scan(&sealed, &keyID); err != nil {
			t.Fatal(err)
		}
		return sealed, keyID
	}
	// withClearFactor stores a second factor as before secrets were sealed.
	withClearFactor := func(t *testing.T, app *App) int64 {
		t.Helper()
		s, err := app.DB.CreateStaff(context.Background(), access.Staff{Username: "ann", Role: access.RoleOps, CreatedAt: time.Now()}, "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.DB.X().Exec(`INSERT INTO staff_totp (staff_id, secret, created_at, confirmed_at) VALUES (?, ?, 1, 1)`, s.ID, secret); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}

	t.Run("embedded: key file made, clear secrets sealed, rotation", func(t *testing.T) {
		dir := t.TempDir()
		env := map[string]string{"SEATFLOW_DB": "sqlite://" + filepath.Join(dir, "seatflow.db")}
		app, err := open(t, env)
		if err != nil {
			t.Fatal(err)
		}
		if info, err := os.Stat(filepath.Join(dir, embeddedTOTPKeyFile)); err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("key file: %v %v", info, err)
		}
		id := withClearFactor(t, app)
		app.Close()

		app, err = open(t, env) // the same key file again
		if err != nil {
			t.Fatal(err)
		}
		if sealed, keyID := stored(t, app, id); keyID == "" || strings.Contains(sealed, secret) {
			t.Fatalf("a clear secret was not sealed at start: %q under %q", sealed, keyID)
		}
		if f, _, err := app.DB.TOTP(context.Background(), id); err != nil || f.Secret != secret {
			t.Fatalf("sealed secret reads %q, %v", f.Secret, err)
		}
		app.Close()

		for _, step := range []map[string]string{
			{"SEATFLOW_TOTP_KEY": keyA}, // the key file's key is lost: not this one
			{"SEATFLOW_TOTP_KEY": keyB, "SEATFLOW_TOTP_KEYS_PREVIOUS": keyA},
			{"SEATFLOW_TOTP_KEY": keyB},
		} {
			step["SEATFLOW_DB"] = env["SEATFLOW_DB"]
			app, err := open(t, step)
			if step["SEATFLOW_TOTP_KEY"] == keyA {
				if err == nil || !strings.Contains(err.Error(), "SEATFLOW_TOTP_KEY") {
					t.Fatalf("a key that does not open the stored secrets: %v", err)
				}
				// Put the secret under key A, as a server with it had sealed it.
				app, err = open(t, map[string]string{"SEATFLOW_DB": env["SEATFLOW_DB"], "SEATFLOW_TOTP_KEY": keyA,
					"SEATFLOW_TOTP_KEYS_PREVIOUS": mustReadKeyFile(t, dir)})
			}
			if err != nil {
				t.Fatalf("%v: %v", step, err)
			}
			if f, _, err := app.DB.TOTP(context.Background(), id); err != nil || f.Secret != secret {
				t.Fatalf("%v: secret %q, %v", step, f.Secret, err)
			}
			app.Close()
		}
	})

	t.Run("real stack without a key", func(t *testing.T) {
		dsn := testenv.NewMySQLDatabase(t)
		env := map[string]string{"SEATFLOW_DB": dsn}
		app, err := open(t, env)
		if err != nil {
			t.Fatalf("no factor stored: %v", err)
		}
		withClearFactor(t, app)
		app.Close()
		if _, err := open(t, env); err == nil || !strings.HasPrefix(err.Error(), "SEATFLOW_TOTP_KEY: not set, and 1 accounts") {
			t.Fatalf("a factor stored and no key: %v", err)
		}
		env["SEATFLOW_TOTP_KEY"] = keyA
		if _, err := open(t, env); err != nil {
			t.Fatalf("with a key: %v", err)
		}
	})
}

func mustReadKeyFile(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, embeddedTOTPKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
