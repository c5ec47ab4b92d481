package server

import (
	"context"
	"sync"
)

// sessionStreams knows the open event streams of every session, so logging
// out or disabling an account ends them at once instead of letting them
// receive seat changes until the browser goes.
type sessionStreams struct {
	mu      sync.Mutex
	streams map[*openStream]struct{}
}

type openStream struct {
	tokenHash string
	staffID   int64
	cancel    context.CancelFunc
}

func newSessionStreams() *sessionStreams {
	return &sessionStreams{streams: map[*openStream]struct{}{}}
}

// open registers a stream of sess; the returned context ends when the
// session is ended, and done unregisters it.
func (s *sessionStreams) open(ctx context.Context, sess *staffSession) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	st := &openStream{tokenHash: sess.session.TokenHash, staffID: sess.staff.ID, cancel: cancel}
	s.mu.Lock()
	s.streams[st] = struct{}{}
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.streams, st)
		s.mu.Unlock()
		cancel()
	}
}

// endSession ends the streams of the session with tokenHash.
func (s *sessionStreams) endSession(tokenHash string) {
	s.end(func(st *openStream) bool { return st.tokenHash == tokenHash })
}

// endStaff ends every stream of the account staffID.
func (s *sessionStreams) endStaff(staffID int64) {
	s.end(func(st *openStream) bool { return st.staffID == staffID })
}

func (s *sessionStreams) end(match func(*openStream) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for st := range s.streams {
		if match(st) {
			st.cancel()
			delete(s.streams, st)
		}
	}
}
