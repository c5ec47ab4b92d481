package web

import (
	"strings"
	"testing"
)

// A dry run offers "Apply" for the items a check would repair, counting
// only those: when every item is report-only there is nothing to apply.
func TestReconcileApplyOnlyRepairable(t *testing.T) {
	report := ReconcileCheck{Name: "open_discrepancy", Found: 3, Items: []ReconcileItem{
		{Action: "report", OrderNo: "SF1"}, {Action: "report", OrderNo: "SF2"}, {Action: "report", OrderNo: "SF3"}}}
	p := Page{Lang: LangEN}
	page := render(t, ReconcileRunPage(p, ReconcileRunData{Run: ReconcileRun{ID: 4, DryRun: true, Checks: []ReconcileCheck{report}}}))
	if strings.Contains(page, `id="apply-all"`) {
		t.Error("a dry run of report-only items offers Apply")
	}
	repair := ReconcileCheck{Name: "expired_pending", Found: 1, Items: []ReconcileItem{{Action: "cancel", OrderNo: "SF9"}}}
	page = render(t, ReconcileRunPage(p, ReconcileRunData{Run: ReconcileRun{ID: 5, DryRun: true,
		Checks: []ReconcileCheck{report, repair}}}))
	if !strings.Contains(page, `id="apply-all"`) || !strings.Contains(page, "Apply: repair these 1 items") {
		t.Errorf("a dry run with one repairable item of four does not offer to repair that one:\n%s", page)
	}
	if n := strings.Count(page, `class="inline apply-item"`); n != 1 {
		t.Errorf("%d per-item repair buttons, want 1 (report-only items get none)", n)
	}
}

// The run that applied a dry run lists each item once: in the comparison
// with the dry run, not again under its check.
func TestReconcileAppliedListsItemsOnce(t *testing.T) {
	item := ReconcileItem{Action: "cancel", OrderNo: "SF9", ShowID: 1, UserID: 2}
	dry := ReconcileRun{ID: 5, DryRun: true, Checks: []ReconcileCheck{{Name: "expired_pending", Found: 1, Items: []ReconcileItem{item}}}}
	fixed := item
	fixed.Fixed = true
	run := ReconcileRun{ID: 6, Checks: []ReconcileCheck{{Name: "expired_pending", Found: 1, Fixed: 1, Items: []ReconcileItem{fixed}}}}
	page := render(t, ReconcileRunPage(Page{Lang: LangEN}, ReconcileRunData{Run: run, Applied: &dry}))
	if n := strings.Count(page, `data-key="expired_pending|`+item.Key()+`"`); n != 1 {
		t.Errorf("the applied run lists its item %d times, want once", n)
	}
}
