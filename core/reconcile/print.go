package reconcile

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// PrintRun writes run as a table for `seatflow reconcile --once`: one line per
// check with found, fixed and errors, then the reason of each failed check.
// The command exits non-zero unless run.OK().
func PrintRun(w io.Writer, run Run) error {
	mode := ""
	if run.DryRun {
		mode = ", dry run: nothing changed"
	}
	took := ""
	if !run.FinishedAt.IsZero() {
		took = " in " + run.FinishedAt.Sub(run.StartedAt).Round(time.Millisecond).String()
	}
	if _, err := fmt.Fprintf(w, "reconcile run %d (%s%s) %s%s\n", run.ID, run.Trigger, mode, run.Status, took); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tFOUND\tFIXED\tERRORS\tMS")
	for _, c := range run.Checks {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", c.Name, c.Found, c.Fixed, c.Errors, c.DurationMS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range run.Checks {
		if c.Error != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", c.Name, c.Error); err != nil {
				return err
			}
		}
		for _, it := range c.Items {
			if it.Error != "" {
				if _, err := fmt.Fprintf(w, "%s: %s %s %v: %s\n", c.Name, it.Action, it.OrderNo, it.SeatIDs, it.Error); err != nil {
					return err
				}
			}
		}
	}
	if run.Error != "" {
		if _, err := fmt.Fprintf(w, "run: %s\n", run.Error); err != nil {
			return err
		}
	}
	return nil
}
