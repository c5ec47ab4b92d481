package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// createAPIKey checks and stores a new key, audited as by: the one path for
// the console's key page and `seatflow apikey add`. The returned secret
// exists nowhere else; the caller shows it once.
func createAPIKey(ctx context.Context, db *store.DB, name, scopes string, by core.StaffAction, now time.Time) (access.APIKey, string, error) {
	name = strings.TrimSpace(name)
	if err := access.ValidAPIKeyName(name); err != nil {
		return access.APIKey{}, "", err
	}
	ss, err := access.ParseScopes(scopes)
	if err != nil {
		return access.APIKey{}, "", err
	}
	secret, prefix := access.NewAPIKeySecret()
	k := access.APIKey{Name: name, Prefix: prefix, Scopes: ss, CreatedBy: by.Staff, CreatedAt: now}
	k, err = db.CreateAPIKey(ctx, k, access.HashAPIKey(secret), by.Entry(now, access.AuditAPIKeyAdd, "",
		map[string]any{"name": name, "prefix": prefix, "scopes": access.JoinScopes(ss)}))
	if err != nil {
		return access.APIKey{}, "", err
	}
	return k, secret, nil
}

// revokeAPIKey revokes key id, audited as by.
func revokeAPIKey(ctx context.Context, db *store.DB, id int64, by core.StaffAction, now time.Time) (access.APIKey, error) {
	return db.RevokeAPIKey(ctx, id, now, by.Entry(now, access.AuditAPIKeyRevoke, "", nil))
}

// cliActor is who the audit log names for changes made on the command line.
var cliActor = core.StaffAction{Staff: core.ActorCLI}

const apiKeyUsage = "usage: seatflow apikey add --name NAME --scope SCOPE[,SCOPE...] | apikey list | apikey revoke ID"

// APIKeyCommand is `seatflow apikey add|list|revoke`. add prints the new key
// once: only its hash is stored.
func APIKeyCommand(ctx context.Context, db *store.DB, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(apiKeyUsage)
	}
	now := time.Now().UTC()
	switch args[0] {
	case "add":
		fs := flag.NewFlagSet("apikey add", flag.ContinueOnError)
		fs.SetOutput(stdout)
		name := fs.String("name", "", "what the key is for, e.g. \"web front end\"")
		scopes := fs.String("scope", "", "comma-separated: "+access.JoinScopes(access.AllScopes))
		if err := fs.Parse(args[1:]); err != nil {
			return fmt.Errorf("apikey add: %w", err)
		}
		if fs.NArg() != 0 {
			return errors.New(apiKeyUsage)
		}
		k, secret, err := createAPIKey(ctx, db, *name, *scopes, cliActor, now)
		if err != nil {
			return fmt.Errorf("apikey add: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "added API key %d %q (%s) with scopes %s\nkey (shown once, store it now): %s\n",
			k.ID, k.Name, k.Prefix, access.JoinScopes(k.Scopes), secret)
		return err
	case "list":
		if len(args) != 1 {
			return errors.New(apiKeyUsage)
		}
		keys, err := db.APIKeys(ctx)
		if err != nil {
			return fmt.Errorf("apikey list: %w", err)
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tPREFIX\tNAME\tSCOPES\tCREATED BY\tCREATED\tLAST USED\tSTATUS")
		for _, k := range keys {
			status := "active"
			if k.Revoked() {
				status = "revoked " + k.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, access.JoinScopes(k.Scopes),
				k.CreatedBy, k.CreatedAt.Format(time.RFC3339), timeOrNever(k.LastUsedAt), status)
		}
		return w.Flush()
	case "revoke":
		if len(args) != 2 {
			return errors.New(apiKeyUsage)
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("apikey revoke: ID must be a positive number (see `seatflow apikey list`)")
		}
		k, err := revokeAPIKey(ctx, db, id, cliActor, now)
		if err != nil {
			return fmt.Errorf("apikey revoke: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "revoked API key %d %q (%s)\n", k.ID, k.Name, k.Prefix)
		return err
	}
	return errors.New(apiKeyUsage)
}

func timeOrNever(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format(time.RFC3339)
}
