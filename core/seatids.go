package core

import (
	"strconv"
	"strings"
)

// CompareSeatIDs orders "ROW-COL" ids the way a seat map reads: by row name
// (shorter first, so Z < AA), then by column number (so 2 < 10). Ids of any
// other shape sort as plain strings after those.
func CompareSeatIDs(a, b string) int {
	ar, ac, aok := splitSeatID(a)
	br, bc, bok := splitSeatID(b)
	switch {
	case aok && bok:
		if c := len(ar) - len(br); c != 0 {
			return c
		}
		if c := strings.Compare(ar, br); c != 0 {
			return c
		}
		return ac - bc
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}

func splitSeatID(id string) (row string, col int, ok bool) {
	row, c, found := strings.Cut(id, "-")
	if !found || row == "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(c)
	if err != nil {
		return "", 0, false
	}
	return row, n, true
}
