package access

import (
	"errors"
	"testing"

	"seatflow/core/fault"
)

func TestRoleCan(t *testing.T) {
	actions := []string{ActView, ActForceCancel, ActExtendHold, ActDiscrepancies, ActReconcile, ActAudit, ActStaff, ActShows,
		ActRefund, ActApproveRefund, ActCounterSale}
	allowed := map[Role][]string{
		RoleBoxOffice: {ActView, ActForceCancel, ActExtendHold, ActRefund, ActCounterSale},
		RoleManager:   {ActView, ActForceCancel, ActExtendHold, ActShows, ActRefund, ActCounterSale},
		RoleOps: {ActView, ActForceCancel, ActExtendHold, ActDiscrepancies, ActReconcile, ActAudit, ActRefund, ActApproveRefund,
			ActCounterSale},
		RoleAdmin:    actions,
		Role("root"): nil,
		Role(""):     nil,
	}
	for role, can := range allowed {
		for _, a := range actions {
			want := false
			for _, c := range can {
				want = want || c == a
			}
			if got := role.Can(a); got != want {
				t.Errorf("%q.Can(%q) = %t, want %t", role, a, got, want)
			}
		}
		if role.Can("delete_everything") {
			t.Errorf("%q can do an unknown action", role)
		}
	}
}

func TestStaffValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"ok username", ValidUsername("box.office-1_a"), nil},
		{"upper case", ValidUsername("Alice"), ErrBadUsername},
		{"one letter", ValidUsername("a"), ErrBadUsername},
		{"space", ValidUsername("a b"), ErrBadUsername},
		{"leading dot", ValidUsername(".ab"), ErrBadUsername},
		{"65 chars", ValidUsername("a" + string(make([]byte, 64))), ErrBadUsername},
	} {
		if !errors.Is(c.err, c.want) || (c.want == nil) != (c.err == nil) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if r, err := ParseRole("ops"); r != RoleOps || err != nil {
		t.Errorf("ParseRole(ops) = %q, %v", r, err)
	}
	var fe *fault.Error
	if _, err := ParseRole("root"); !errors.Is(err, ErrBadRole) || !errors.As(err, &fe) || fe.Kind != fault.KindInvalid {
		t.Errorf("ParseRole(root) = %v", err)
	}
}

func TestLoginName(t *testing.T) {
	for _, tc := range []struct {
		typed, want string
		ok          bool
	}{
		{"ann", "ann", true},
		{"  Ann.Lee ", "ann.lee", true},
		{"ánn", "ánn", false},
		{"ANN\u0130", "ANN\u0130", false}, // İ lower-cases to an ASCII i in Go
		{"ａnn", "ａnn", false},
		{"a", "a", false},
		{"", "", false},
	} {
		if got, ok := LoginName(tc.typed); got != tc.want || ok != tc.ok {
			t.Errorf("LoginName(%q) = %q, %t; want %q, %t", tc.typed, got, ok, tc.want, tc.ok)
		}
	}
}
