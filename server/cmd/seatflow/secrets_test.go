package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A secret generated while stdout is not a terminal (a log) goes to a 0600
// file in the data directory, every generated one; the output names the
// file, never the value.
func TestGeneratedSecretsGoToAPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := testEnv(t, map[string]string{"SEATFLOW_DB": "sqlite://" + filepath.Join(dir, "seatflow.db"),
		"SEATFLOW_API_TOKEN": "", "SEATFLOW_PAYMENT_SECRET": "", "SEATFLOW_ADMISSION_KEY": ""})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"seatflow", "demo"}, env, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	path := filepath.Join(dir, generatedSecretsFile)
	if !strings.Contains(out.String(), path) {
		t.Fatalf("output does not name %s:\n%s", path, out.String())
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("%s has mode %04o, want 0600", path, perm)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"SEATFLOW_API_TOKEN": true, "SEATFLOW_PAYMENT_SECRET": true, "SEATFLOW_ADMISSION_KEY": true}
	for _, line := range strings.Split(strings.TrimSpace(string(content)), "\n") {
		name, value, _ := strings.Cut(line, "=")
		if !want[name] || len(value) < 16 {
			t.Fatalf("unexpected line %q in %s", line, path)
		}
		delete(want, name)
		if strings.Contains(out.String(), value) {
			t.Errorf("the value of %s is printed:\n%s", name, out.String())
		}
	}
	if len(want) != 0 {
		t.Errorf("%s lacks %v", path, want)
	}
	dirInfo, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := dirInfo.Mode().Perm(); perm != 0o700 {
		t.Errorf("data dir %s has mode %04o, want 0700", dir, perm)
	}
}
