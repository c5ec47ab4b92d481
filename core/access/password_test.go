package access

import (
	"errors"
	"strings"
	"testing"
)

func TestValidPassword(t *testing.T) {
	cases := []struct {
		pw, user string
		want     error
	}{
		{"correct horse battery", "ann", nil},
		{"Vq7#mR2!xLp9", "ann", nil},
		{"ünïcödé-pässwörd-ok", "ann", nil},               // 12+ characters, counted as characters not bytes
		{"Vq7#mR2!xLp", "ann", ErrWeakPassword},           // 11 characters
		{strings.Repeat("a", 73), "ann", ErrWeakPassword}, // more than bcrypt reads
		{"my name is Ann.Smith ok", "ann.smith", ErrPasswordHasUsername},
		{"123qweasdzxc", "ann", ErrCommonPassword},  // on the breach list, 12 characters
		{"QWERTY123456", "ann", ErrCommonPassword},  // on the list, whatever the case
		{"Password12345", "ann", ErrCommonPassword}, // a small step from "password"
		{"aaaaaaaaaaaaaaaa", "ann", ErrCommonPassword},
	}
	for _, tc := range cases {
		if err := ValidPassword(tc.pw, tc.user); !errors.Is(err, tc.want) {
			t.Errorf("ValidPassword(%q, %q) = %v, want %v", tc.pw, tc.user, err, tc.want)
		}
	}
}
