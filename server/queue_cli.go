package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"seatflow/core/admission"
)

const queueUsage = "usage: seatflow queue verify --show N"

// QueueCommand is `seatflow queue verify --show N`: it recomputes every
// pre-queue position from the published seed and the joins in the store
// and checks the published order against it. A mismatch is an error (the
// exit status is not zero) naming the first entry that does not verify.
func QueueCommand(ctx context.Context, store admission.Store, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "verify" {
		return errors.New(queueUsage)
	}
	fs := flag.NewFlagSet("queue verify", flag.ContinueOnError)
	fs.SetOutput(stdout)
	show := fs.Int64("show", 0, "the show whose queue to verify")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("queue verify: %w", err)
	}
	if fs.NArg() != 0 || *show <= 0 {
		return errors.New(queueUsage)
	}
	st, err := store.Status(ctx, *show)
	if err != nil {
		return fmt.Errorf("queue verify: show %d: %w", *show, err)
	}
	if st.SeedHash == "" {
		return fmt.Errorf("queue verify: show %d has no pre-queue (no opens_at): its order is the join order", *show)
	}
	if st.Seed == "" {
		return fmt.Errorf("queue verify: show %d: the pre-queue is not drawn yet; its seed is published at opens_at (hash %s)", *show, st.SeedHash)
	}
	entries, positions, err := store.Entries(ctx, *show)
	if err != nil {
		return fmt.Errorf("queue verify: show %d: %w", *show, err)
	}
	if err := admission.Verify(st.Seed, st.SeedHash, entries, positions); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "OK: show %d, %d entries (%d in the pre-queue) in the order seed %s (SHA-256 %s) draws\n",
		*show, len(entries), st.PreJoined, st.Seed, st.SeedHash)
	return err
}
