package server

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"seatflow/core/admission"
)

const queueUsage = "usage: seatflow queue verify --show N | seatflow queue verify --file PROOF.json"

// QueueCommand is `seatflow queue verify`: it recomputes every pre-queue
// position from the published seed and the joins and checks the published
// order against it. With --show it reads the seat store (a shared Redis,
// opened by open); with --file, a saved answer of GET
// /api/v1/shows/{id}/queue/entries, needing no store at all: how anyone
// given the proof checks it, and how an embedded stack's queue (in the
// server's process) is checked. A mismatch is an error (the exit status is
// not zero) naming the first entry that does not verify.
func QueueCommand(ctx context.Context, open func() (admission.Store, io.Closer, error), args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "verify" {
		return errors.New(queueUsage)
	}
	fs := flag.NewFlagSet("queue verify", flag.ContinueOnError)
	fs.SetOutput(stdout)
	show := fs.Int64("show", 0, "the show whose queue to verify, read from the seat store")
	file := fs.String("file", "", "a saved answer of GET /api/v1/shows/{id}/queue/entries to verify instead")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("queue verify: %w", err)
	}
	if fs.NArg() != 0 || (*show > 0) == (*file != "") {
		return errors.New(queueUsage)
	}
	var p queueProof
	var err error
	if *file != "" {
		p, err = readQueueProof(*file)
	} else {
		p, err = storeQueueProof(ctx, open, *show)
	}
	if err != nil {
		return fmt.Errorf("queue verify: %w", err)
	}
	if p.seedHash == "" {
		return fmt.Errorf("queue verify: show %d has no pre-queue (no opens_at): its order is the join order", p.show)
	}
	if p.seed == "" {
		return fmt.Errorf("queue verify: show %d: the pre-queue is not drawn yet; its seed is published at opens_at (hash %s)", p.show, p.seedHash)
	}
	if err := admission.Verify(p.seed, p.seedHash, p.entries, p.positions); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "OK: show %d, %d entries (%d in the pre-queue) in the order seed %s (SHA-256 %s) draws\n",
		p.show, len(p.entries), p.preJoined, p.seed, p.seedHash)
	return err
}

// queueProof is what verification needs, from the store or from a file.
type queueProof struct {
	show           int64
	seed, seedHash string
	preJoined      int64
	entries        []admission.Entry
	positions      []int64
}

func storeQueueProof(ctx context.Context, open func() (admission.Store, io.Closer, error), show int64) (_ queueProof, err error) {
	store, closer, err := open()
	if err != nil {
		return queueProof{}, err
	}
	defer func() { err = errors.Join(err, closer.Close()) }()
	st, err := store.Status(ctx, show)
	if err != nil {
		return queueProof{}, fmt.Errorf("show %d: %w", show, err)
	}
	entries, positions, err := store.Entries(ctx, show)
	if err != nil {
		return queueProof{}, fmt.Errorf("show %d: %w", show, err)
	}
	return queueProof{show: show, seed: st.Seed, seedHash: st.SeedHash, preJoined: st.PreJoined,
		entries: entries, positions: positions}, nil
}

// maxProofBytes bounds the file read: 100,000 joins take about 10 MB.
const maxProofBytes = 256 << 20

func readQueueProof(path string) (queueProof, error) {
	f, err := os.Open(path)
	if err != nil {
		return queueProof{}, err
	}
	defer f.Close()
	var j queueProofJSON
	dec := json.NewDecoder(io.LimitReader(f, maxProofBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return queueProof{}, fmt.Errorf("%s: not a queue proof (GET /api/v1/shows/{id}/queue/entries): %w", path, err)
	}
	p := queueProof{show: j.ShowID, seed: j.Seed, seedHash: j.SeedHash, preJoined: j.PreJoined,
		entries: make([]admission.Entry, len(j.Entries)), positions: make([]int64, len(j.Entries))}
	for i, e := range j.Entries {
		joined, err := time.Parse(time.RFC3339, e.JoinedAt)
		if err != nil {
			return queueProof{}, fmt.Errorf("%s: entry %d: joined_at: %w", path, i+1, err)
		}
		p.entries[i] = admission.Entry{Show: j.ShowID, User: e.UserID, Seq: e.Seq, Pre: e.Pre, JoinedAt: joined}
		p.positions[i] = e.Position
	}
	return p, nil
}
