// Package migrations embeds the goose SQL migrations of both dialects, so the
// binary migrates its own database at start and with `seatflow migrate`.
package migrations

import "embed"

// FS holds mysql/*.sql and sqlite/*.sql.
//
//go:embed mysql/*.sql sqlite/*.sql
var FS embed.FS
