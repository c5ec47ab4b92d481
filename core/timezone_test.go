package core

import (
	"errors"
	"strings"
	"testing"
)

func TestTimeZone(t *testing.T) {
	for _, c := range []struct {
		name string
		want string // the zone's name; "" for the server's; "bad" for refused
	}{
		{"", ""},
		{"Europe/Berlin", "Europe/Berlin"},
		{"Asia/Shanghai", "Asia/Shanghai"},
		{"UTC", "UTC"},
		{"America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"},
		{"Mars/Olympus_Mons", "bad"},
		{"europe/berlin", "bad"},
		{"Local", "bad"}, // the server's zone by another name
		{" Europe/Berlin", "bad"},
		{"../../../etc/passwd", "bad"},
		{"/etc/localtime", "bad"},
		{strings.Repeat("A/", 40), "bad"},
	} {
		z, err := TimeZone(c.name)
		switch {
		case c.want == "bad":
			if z != nil || !errors.Is(err, ErrBadTimeZone) || ErrorKind(err) != KindInvalid {
				t.Errorf("TimeZone(%q) = %v, %v; want bad_time_zone", c.name, z, err)
			}
		case c.want == "":
			if z != nil || err != nil {
				t.Errorf("TimeZone(%q) = %v, %v; want the server's (nil)", c.name, z, err)
			}
		case err != nil || z == nil || z.String() != c.want:
			t.Errorf("TimeZone(%q) = %v, %v; want %s", c.name, z, err, c.want)
		}
	}
	// A second look-up is the cached zone.
	a, _ := TimeZone("Asia/Tokyo")
	if b, _ := TimeZone("Asia/Tokyo"); a != b {
		t.Error("Asia/Tokyo loaded twice")
	}
}
