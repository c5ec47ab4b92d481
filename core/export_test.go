package core

// For core_test's group-commit tests (groupcommit_test.go).

// PlaceWriters is how many placement batches may commit at once.
const PlaceWriters = placeWriters

// PlaceQueueLen is how many placements wait for a writer.
func PlaceQueueLen(e *Engine) int {
	e.placer.mu.Lock()
	defer e.placer.mu.Unlock()
	return len(e.placer.queue)
}

// CancelWriters is how many cancel batches may commit at once.
const CancelWriters = endWriters

// CancelQueueLen is how many cancels wait for a writer.
func CancelQueueLen(e *Engine) int {
	e.canceller.mu.Lock()
	defer e.canceller.mu.Unlock()
	return len(e.canceller.queue)
}

// PayWriters is how many payment batches may commit at once.
const PayWriters = endWriters

// PayQueueLen is how many payments wait for a writer.
func PayQueueLen(e *Engine) int {
	e.payer.mu.Lock()
	defer e.payer.mu.Unlock()
	return len(e.payer.queue)
}
