package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"seatflow/server"
)

// generatedSecretsFile is where secrets made up at start are written when
// stdout is not a terminal: stdout is then usually a log, kept and shipped.
const generatedSecretsFile = "generated-secrets.env"

// printGeneratedSecrets hands over, once, the secrets made up because their
// variable was empty: without them nobody could call the API. On a terminal
// they are printed; otherwise they go to a 0600 file in the data directory
// and only its path is printed.
func printGeneratedSecrets(w io.Writer, cfg server.Config, advice string) error {
	var lines []string
	if cfg.APITokenGenerated {
		lines = append(lines, "SEATFLOW_API_TOKEN="+cfg.APIToken.Reveal())
	}
	if cfg.PaymentSecretGenerated {
		lines = append(lines, "SEATFLOW_PAYMENT_SECRET="+cfg.PaymentSecret.Reveal())
	}
	if cfg.AdmissionKeyGenerated {
		lines = append(lines, "SEATFLOW_ADMISSION_KEY="+base64.StdEncoding.EncodeToString(cfg.AdmissionKey))
	}
	if len(lines) == 0 {
		return nil
	}
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i], _, _ = strings.Cut(l, "=")
	}
	what := strings.Join(names, " and ")
	// Instances given different values refuse each other's bootstrap
	// token, payment callbacks and admissions.
	advice += "; several instances must all be given the same"
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(w, "WARNING: %s not set; generated (%s):\n  %s\n", what, advice, strings.Join(lines, "\n  "))
		return nil
	}
	path := filepath.Join(dataDir(cfg), generatedSecretsFile)
	if err := writePrivateFile(path, strings.Join(lines, "\n")+"\n"); err != nil {
		return fmt.Errorf("write generated secrets: %w", err)
	}
	fmt.Fprintf(w, "WARNING: %s not set; generated (%s) and written to %s\n", what, advice, path)
	return nil
}

// dataDir is the folder of the SQLite database, or ./data with MySQL.
func dataDir(cfg server.Config) string {
	if name, ok := strings.CutPrefix(cfg.DB, "sqlite://"); ok && !strings.HasPrefix(name, ":memory:") {
		name, _, _ = strings.Cut(name, "?")
		return filepath.Dir(name)
	}
	return "data"
}

// writePrivateFile writes content to path, readable by this user only.
func writePrivateFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	// A file left by an older version may be wider than 0600.
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
