package access

import (
	"testing"
	"time"
)

func TestTOTPStep(t *testing.T) {
	secret, err := NewTOTPSecret("ann")
	if err != nil || len(secret) < 16 {
		t.Fatalf("NewTOTPSecret: %q %v", secret, err)
	}
	if u := TOTPURL(secret, "ann"); u != "otpauth://totp/SeatFlow:ann?algorithm=SHA1&digits=6&issuer=SeatFlow&period=30&secret="+secret {
		t.Errorf("TOTPURL = %q", u)
	}
	now := time.Unix(1_800_000_015, 0) // 15 s into a step
	step := now.Unix() / 30
	code := func(t0 time.Time) string {
		c, err := TOTPCode(secret, t0)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		name     string
		code     string
		wantStep int64
		ok       bool
	}{
		{"current", code(now), step, true},
		{"with spaces", code(now)[:3] + " " + code(now)[3:], step, true},
		{"previous step (a slow phone)", code(now.Add(-30 * time.Second)), step - 1, true},
		{"next step (a fast phone)", code(now.Add(30 * time.Second)), step + 1, true},
		{"two steps old", code(now.Add(-60 * time.Second)), 0, false},
		{"wrong", "000000", 0, false},
		{"too short", code(now)[:5], 0, false},
		{"letters", "abcdef", 0, false},
	}
	for _, tc := range cases {
		got, ok := TOTPStep(secret, tc.code, now)
		if ok != tc.ok || (ok && got != tc.wantStep) {
			// A wrong code may match by chance one time in a million.
			t.Errorf("%s: TOTPStep(%q) = %d, %t; want %d, %t", tc.name, tc.code, got, ok, tc.wantStep, tc.ok)
		}
	}
}

func TestSecondFactorPolicy(t *testing.T) {
	for _, tc := range []struct {
		in               string
		admin, boxOffice bool
		bad              bool
	}{
		{"", false, false, false},
		{"admin", true, false, false},
		{"all", true, true, false},
		{"everyone", false, false, true},
	} {
		p, err := ParseSecondFactorPolicy(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if p.Required(RoleAdmin) != tc.admin || p.Required(RoleBoxOffice) != tc.boxOffice {
			t.Errorf("%q: admin %t box office %t", tc.in, p.Required(RoleAdmin), p.Required(RoleBoxOffice))
		}
	}
}
