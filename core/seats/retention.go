package seats

import "context"

// DeleteShow removes every key of a show that is over: its seats, purchase
// counters, blocks and seat index. The keys share the show's hash tag, so this is one
// DEL on one node, in a cluster too. Deleting keys that are gone already is
// not an error, so a retention run may repeat it.
func (s *Store) DeleteShow(ctx context.Context, showID int64) error {
	if err := s.rdb.Del(ctx, KeySeats(showID), KeyLimit(showID), KeyBlocked(showID), KeyBest(showID), KeyBestBounds(showID)).Err(); err != nil {
		return wrap("delete show keys", err)
	}
	return nil
}
