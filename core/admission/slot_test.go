package admission

import (
	"fmt"
	"strings"
	"testing"
)

// keySlot is Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag
// (the part between the first { and the next }, when not empty) mod 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for _, b := range []byte(key) {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// TestKeySlots: every key of a show's queue is in the slot of the show's
// seat keys (core/seats: sf:{show:<id>}:seats), so each script runs on one
// Cluster node and the queue fails over with the seats.
func TestKeySlots(t *testing.T) {
	known := []struct {
		key  string
		slot int
	}{
		{"123456789", 0x31C3 % 16384}, // the CRC16/XMODEM check value
		{"foo", 12182},                // Redis's CLUSTER KEYSLOT foo
		{"{user1000}.following", keySlot("user1000")},
	}
	for _, k := range known {
		if got := keySlot(k.key); got != k.slot {
			t.Fatalf("slot of %q: %d, want %d", k.key, got, k.slot)
		}
	}
	for _, show := range []int64{1, 42, 1 << 40, 1<<52 + 12345} {
		want := keySlot(fmt.Sprintf("sf:{show:%d}:seats", show))
		for _, k := range showKeys(show) {
			if got := keySlot(k); got != want {
				t.Errorf("%s: slot %d, the seat keys' %d", k, got, want)
			}
		}
	}
}
