package admission

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core/fault"
)

// The Redis store's keys share the show's hash tag with its seat keys
// (seats.KeySeats), so every script touches one Cluster slot, and the
// queue fails over with the seats it admits to:
//
//	sf:{show:<id>}:q:cfg      hash: the settings (enabled, mode, opens_ms,
//	                          window_ms, paused), seed and seed_hash, and the
//	                          counters: seq (joined), pre (pre-joined),
//	                          closed, shuffled, head, placed
//	sf:{show:<id>}:q:users    hash user → "seq|pre|joined_ms|ticket"
//	sf:{show:<id>}:q:pos      hash pre-queue user → drawn position
//	sf:{show:<id>}:q:admitted hash user → first seen admitted (ms)
//	sf:{show:<id>}:q:placed   set of users whose admission was used
//	sf:queues                 set of shows ever enabled (no tag: a listing
//	                          only, Shows checks each one)

var (
	//go:embed queue_configure.lua
	configureLua string
	//go:embed queue_join.lua
	joinLua string
	//go:embed queue_close.lua
	closeLua string
	//go:embed queue_draw.lua
	drawLua string
	//go:embed queue_advance.lua
	advanceLua string
	//go:embed queue_user.lua
	userLua string
)

var _ Store = (*Redis)(nil)

// keyQueues lists the shows whose queue was ever enabled.
const keyQueues = "sf:queues"

func keyCfg(show int64) string      { return queueKey(show, "cfg") }
func keyUsers(show int64) string    { return queueKey(show, "users") }
func keyPos(show int64) string      { return queueKey(show, "pos") }
func keyAdmitted(show int64) string { return queueKey(show, "admitted") }
func keyPlaced(show int64) string   { return queueKey(show, "placed") }
func keyClaims(show int64) string   { return queueKey(show, "claims") }

func queueKey(show int64, part string) string { return fmt.Sprintf("sf:{show:%d}:q:%s", show, part) }

func showKeys(show int64) []string {
	return []string{keyCfg(show), keyUsers(show), keyPos(show), keyAdmitted(show), keyPlaced(show), keyClaims(show)}
}

// Redis is the waiting rooms in the seat store's Redis: a single node, a
// Cluster or a Sentinel group (any redis.UniversalClient, as seats.Dial
// returns). Every change is one Lua script; it is safe for concurrent use
// by any number of instances.
type Redis struct {
	rdb                                      redis.UniversalClient
	configure, join, close, draw, adv, users *redis.Script
}

// NewRedis returns a Store on client.
func NewRedis(client redis.UniversalClient) *Redis {
	return &Redis{rdb: client,
		configure: redis.NewScript(configureLua), join: redis.NewScript(joinLua),
		close: redis.NewScript(closeLua), draw: redis.NewScript(drawLua),
		adv: redis.NewScript(advanceLua), users: redis.NewScript(userLua)}
}

// Configure implements Store. The show is listed in sf:queues before its
// settings are written, so the listing never misses an enabled queue.
func (r *Redis) Configure(ctx context.Context, show int64, s Settings) (Status, error) {
	s = normalize(s)
	if s.Enabled {
		if err := r.rdb.SAdd(ctx, keyQueues, show).Err(); err != nil {
			return Status{}, wrap("list the queue", err)
		}
	}
	var seed, hash string
	if s.Enabled && !s.OpensAt.IsZero() {
		b, err := NewSeed()
		if err != nil {
			return Status{}, err
		}
		seed, hash = hex.EncodeToString(b), SeedHash(b)
	}
	var opens int64
	if !s.OpensAt.IsZero() {
		opens = s.OpensAt.UnixMilli()
	}
	res, err := r.configure.Run(ctx, r.rdb, []string{keyCfg(show)},
		flag(s.Enabled), string(s.Mode), opens, s.Window.Milliseconds(), flag(s.Paused), seed, hash).StringSlice()
	if err != nil {
		return Status{}, wrap("configure the queue", err)
	}
	m := make(map[string]string, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		m[res[i]] = res[i+1]
	}
	return parseStatus(m)
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// parseStatus reads the cfg hash.
func parseStatus(m map[string]string) (Status, error) {
	if len(m) == 0 {
		return Status{}, ErrNoQueue
	}
	n := func(field string) int64 {
		v, _ := strconv.ParseInt(m[field], 10, 64) // absent: 0
		return v
	}
	s := Status{Settings: Settings{Enabled: m["enabled"] == "1", Mode: Mode(m["mode"]),
		Window: time.Duration(n("window_ms")) * time.Millisecond, Paused: m["paused"] == "1",
		SeedHash: m["seed_hash"]},
		Joined: n("seq"), PreJoined: n("pre"), Shuffled: m["shuffled"] == "1", Admitted: n("head"), Placed: n("placed")}
	if ms := n("opens_ms"); ms != 0 {
		s.OpensAt = time.UnixMilli(ms).UTC()
	}
	if s.Shuffled {
		s.Seed = m["seed"]
	}
	return s, nil
}

// Status implements Store: one HGETALL.
func (r *Redis) Status(ctx context.Context, show int64) (Status, error) {
	m, err := r.rdb.HGetAll(ctx, keyCfg(show)).Result()
	if err != nil {
		return Status{}, wrap("read the queue", err)
	}
	return parseStatus(m)
}

// Join implements Store.
func (r *Redis) Join(ctx context.Context, show, user int64, ticket string, now time.Time) (Entry, bool, error) {
	res, err := r.join.Run(ctx, r.rdb, []string{keyCfg(show), keyUsers(show)}, user, ticket, now.UnixMilli()).StringSlice()
	if err != nil {
		return Entry{}, false, wrap("join the queue", err)
	}
	if res[0] == "none" {
		return Entry{}, false, ErrNoQueue
	}
	e, err := parseEntry(show, user, res[1])
	return e, res[0] == "new", err
}

// parseEntry reads a users hash value: "seq|pre|joined_ms|ticket".
func parseEntry(show, user int64, v string) (Entry, error) {
	f := strings.SplitN(v, "|", 4)
	if len(f) != 4 {
		return Entry{}, fmt.Errorf("admission: show %d user %d: bad entry %q", show, user, v)
	}
	seq, err1 := strconv.ParseInt(f[0], 10, 64)
	ms, err2 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Entry{}, fmt.Errorf("admission: show %d user %d: bad entry %q: %w", show, user, v, err)
	}
	return Entry{Show: show, User: user, Seq: seq, Pre: f[1] == "1", JoinedAt: time.UnixMilli(ms).UTC(), Ticket: f[3]}, nil
}

// user runs queue_user.lua: the reply's value, ErrNoQueue for no queue.
func (r *Redis) user(ctx context.Context, op string, show, user int64, now time.Time, args ...any) (string, error) {
	res, err := r.users.Run(ctx, r.rdb, []string{keyCfg(show), keyAdmitted(show), keyPlaced(show), keyPos(show), keyClaims(show)},
		append([]any{op, user, now.UnixMilli()}, args...)...).StringSlice()
	if err != nil {
		return "", wrap("queue "+op, err)
	}
	if res[0] == "none" {
		return "", ErrNoQueue
	}
	return res[1], nil
}

// Position implements Store: no Redis call after opening.
func (r *Redis) Position(ctx context.Context, e Entry) (int64, error) {
	if !e.Pre {
		return e.Seq, nil
	}
	v, err := r.user(ctx, "pos", e.Show, e.User, time.Time{})
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// Shuffle implements Store in two scripts around Go, as Lua has no
// SHA-256: one closes the pre-queue (no pre-queue join after it), Go reads
// the pre-queue and draws its order, the other stores the order and
// publishes the seed unless it is drawn already. Callers at once all draw
// the same order from the same seed and entries; one stores it.
func (r *Redis) Shuffle(ctx context.Context, show int64, now time.Time) (bool, error) {
	res, err := r.close.Run(ctx, r.rdb, []string{keyCfg(show)}, now.UnixMilli()).StringSlice()
	if err != nil {
		return false, wrap("close the pre-queue", err)
	}
	switch res[0] {
	case "none":
		return false, ErrNoQueue
	case "no":
		return false, nil
	}
	seed, err := hex.DecodeString(res[1])
	if err != nil {
		return false, fmt.Errorf("admission: show %d: stored seed: %w", show, err)
	}
	preN, _ := strconv.ParseInt(res[2], 10, 64)
	all, err := r.readEntries(ctx, show)
	if err != nil {
		return false, err
	}
	pre := all[:min(preN, int64(len(all)))]
	if int64(len(pre)) != preN || slices.ContainsFunc(pre, func(e Entry) bool { return !e.Pre }) {
		return false, fmt.Errorf("admission: show %d: %d pre-queue joins counted, the entries disagree", show, preN)
	}
	pos := DrawOrder(seed, pre)
	args := make([]any, 0, 1+2*len(pre))
	args = append(args, res[1])
	for i, e := range pre {
		args = append(args, e.User, pos[i])
	}
	stored, err := r.draw.Run(ctx, r.rdb, []string{keyCfg(show), keyPos(show)}, args...).Int()
	if err != nil {
		return false, wrap("store the draw", err)
	}
	return stored == 1, nil
}

// readEntries returns the show's entries in Seq order.
func (r *Redis) readEntries(ctx context.Context, show int64) ([]Entry, error) {
	m, err := r.rdb.HGetAll(ctx, keyUsers(show)).Result()
	if err != nil {
		return nil, wrap("read the queue entries", err)
	}
	return entriesOf(show, m)
}

func entriesOf(show int64, m map[string]string) ([]Entry, error) {
	es := make([]Entry, 0, len(m))
	for k, v := range m {
		user, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("admission: show %d: bad user %q", show, k)
		}
		e, err := parseEntry(show, user, v)
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	return es, nil
}

// Advance implements Store. A paused or disabled queue does not advance.
func (r *Redis) Advance(ctx context.Context, show int64, n int64) (int64, error) {
	head, err := r.adv.Run(ctx, r.rdb, []string{keyCfg(show)}, n).Int64()
	if err != nil {
		return 0, wrap("advance the queue", err)
	}
	if head < 0 {
		return 0, ErrNoQueue
	}
	return head, nil
}

// AdmittedAt implements Store.
func (r *Redis) AdmittedAt(ctx context.Context, show, user int64, now time.Time) (time.Time, error) {
	v, err := r.user(ctx, "admitted", show, user, now)
	if err != nil {
		return time.Time{}, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("admission: show %d user %d: bad admission time %q", show, user, v)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// ClaimPlacement implements Store.
func (r *Redis) ClaimPlacement(ctx context.Context, show, user int64, holder string, until, now time.Time) (Claim, error) {
	v, err := r.user(ctx, "claim", show, user, now, holder, until.UnixMilli())
	switch {
	case err != nil:
		return 0, err
	case v == "used":
		return ClaimUsed, nil
	case v == "busy":
		return ClaimBusy, nil
	}
	return ClaimTaken, nil
}

// EndPlacement implements Store.
func (r *Redis) EndPlacement(ctx context.Context, show, user int64, holder string, placed bool) (bool, error) {
	op := "release"
	if placed {
		op = "mark"
	}
	v, err := r.user(ctx, op, show, user, time.Time{}, holder)
	return v == "1", err
}

// Entries implements Store: one MULTI, so the entries and positions are of
// one moment.
func (r *Redis) Entries(ctx context.Context, show int64) ([]Entry, []int64, error) {
	var exists *redis.IntCmd
	var users, pos *redis.MapStringStringCmd
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, keyCfg(show))
		users = p.HGetAll(ctx, keyUsers(show))
		pos = p.HGetAll(ctx, keyPos(show))
		return nil
	})
	if err != nil {
		return nil, nil, wrap("read the queue entries", err)
	}
	if exists.Val() == 0 {
		return nil, nil, ErrNoQueue
	}
	es, err := entriesOf(show, users.Val())
	if err != nil {
		return nil, nil, err
	}
	drawn := pos.Val()
	ps := make([]int64, len(es))
	for i, e := range es {
		ps[i] = e.Seq
		if e.Pre {
			ps[i], _ = strconv.ParseInt(drawn[strconv.FormatInt(e.User, 10)], 10, 64) // not drawn: 0
		}
	}
	return es, ps, nil
}

// Shows implements Store: the listed shows whose queue is enabled now.
func (r *Redis) Shows(ctx context.Context) ([]int64, error) {
	listed, err := r.rdb.SMembers(ctx, keyQueues).Result()
	if err != nil {
		return nil, wrap("list the queues", err)
	}
	ids := make([]int64, 0, len(listed))
	for _, v := range listed {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	cmds := make([]*redis.StringCmd, len(ids))
	// The error is the first command's: each one is looked at below.
	_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, keyCfg(id), "enabled")
		}
		return nil
	})
	var on []int64
	for i, id := range ids {
		v, err := cmds[i].Result()
		if err != nil && !errors.Is(err, redis.Nil) { // Nil: deleted meanwhile
			return nil, wrap("read the queues", err)
		}
		if v == "1" {
			on = append(on, id)
		}
	}
	return on, nil
}

// Delete implements Store: one DEL (the keys share a slot), then the
// listing.
func (r *Redis) Delete(ctx context.Context, show int64) error {
	if err := r.rdb.Del(ctx, showKeys(show)...).Err(); err != nil {
		return wrap("delete the queue", err)
	}
	if err := r.rdb.SRem(ctx, keyQueues, show).Err(); err != nil {
		return wrap("unlist the queue", err)
	}
	return nil
}

// unavailableReplies are the replies of a Redis failing over or starting
// (as in core/seats): the command did not run and will work again soon.
var unavailableReplies = []string{"CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "LOADING", "READONLY", "NOREPLICAS", "MOVED", "ASK"}

// wrap adds context to a Redis error: a reply from the server is a plain
// error, except the failover replies; those and anything else (refused,
// timed out, closed) are classified store_unavailable, as the seat
// store's.
func wrap(op string, err error) error {
	var reply redis.Error
	if errors.As(err, &reply) && !slices.ContainsFunc(unavailableReplies, func(p string) bool {
		msg := reply.Error()
		return msg == p || strings.HasPrefix(msg, p+" ")
	}) {
		return fmt.Errorf("admission: %s: %w", op, err)
	}
	return &fault.Error{Kind: fault.KindUnavailable, Code: "store_unavailable", Message: "admission: " + op, Err: err}
}
