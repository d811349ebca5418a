package explain

import (
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State is how a link of the chain stands.
type State int

const (
	// OK: the link exists and is ready.
	OK State = iota
	// Failing: the link is missing, not ready or refused.
	Failing
	// Unknown: not checked yet, or not checkable from here.
	Unknown
)

// mark is how a state reads at the start of a line.
func (s State) mark() string {
	switch s {
	case OK:
		return "[ok]  "
	case Failing:
		return "[FAIL]"
	default:
		return "[?]   "
	}
}

// Link is one object of the chain eso follows.
type Link struct {
	// Depth indents the link under the one it hangs from.
	Depth int
	// What names the object: kind, namespace/name, apiVersion.
	What  string
	State State
	// Status is one line on its state ("Ready=True Valid: ...").
	Status string
	// Details are further lines (how it was resolved, key names, ...).
	Details []string
	// Hint is what to change when the link fails; empty when nothing.
	Hint string
}

// Report is everything `eso explain` says about one object.
type Report struct {
	Title string
	Links []Link
	// LastDid and Next: what eso last did and when, and when it acts next.
	LastDid []string
	Next    []string
}

// add appends a link to the chain.
func (r *Report) add(l Link) { r.Links = append(r.Links, l) }

// Failing reports whether any link fails.
func (r *Report) Failing() bool {
	for _, l := range r.Links {
		if l.State == Failing {
			return true
		}
	}
	return false
}

// Render writes the report as plain text.
func (r *Report) Render(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nChain:\n", r.Title)
	for _, l := range r.Links {
		indent := "  " + strings.Repeat("   ", l.Depth)
		arrow := ""
		if l.Depth > 0 {
			arrow = "-> "
		}
		fmt.Fprintf(&b, "%s%s%s %s\n", indent, arrow, l.State.mark(), l.What)
		sub := indent + strings.Repeat(" ", len(arrow)) + "       "
		if l.Status != "" {
			fmt.Fprintf(&b, "%s%s\n", sub, l.Status)
		}
		for _, d := range l.Details {
			fmt.Fprintf(&b, "%s%s\n", sub, d)
		}
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", title)
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	section("What eso last did:", r.LastDid)
	section("When eso acts next:", r.Next)
	var hints []string
	for _, l := range r.Links {
		if l.Hint != "" && l.State != OK {
			hints = append(hints, "- "+l.What+": "+l.Hint)
		}
	}
	if len(hints) == 0 && !r.Failing() {
		hints = []string{"nothing: every link is ready"}
	}
	section("What to change:", hints)
	_, err := io.WriteString(w, b.String())
	return err
}

// conditionLine is one condition as a line: "Ready=False StoreNotFound:
// message (generation 3 of 4)". A condition about an older generation says
// so: eso has not looked at the latest edit yet.
func conditionLine(conds []metav1.Condition, typ string, generation int64) string {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return typ + ": not set yet (eso has not acted on it)"
	}
	line := fmt.Sprintf("%s=%s %s", typ, c.Status, c.Reason)
	if c.Message != "" {
		line += ": " + c.Message
	}
	if c.ObservedGeneration != 0 && generation != 0 && c.ObservedGeneration != generation {
		line += fmt.Sprintf(" (about generation %d; the object is at %d, not looked at yet)", c.ObservedGeneration, generation)
	}
	return line
}

// conditionState is the state a Ready condition gives its object.
func conditionState(conds []metav1.Condition, typ string) State {
	c := meta.FindStatusCondition(conds, typ)
	switch {
	case c == nil || c.Status == metav1.ConditionUnknown:
		return Unknown
	case c.Status == metav1.ConditionTrue:
		return OK
	default:
		return Failing
	}
}

// conditionReason is a condition's reason, empty when it is absent.
func conditionReason(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Reason
	}
	return ""
}

// when says a time as a timestamp and how long ago it was.
func when(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), now.Sub(t.Time).Round(time.Second))
}

// readyTime is when a condition last changed, zero when absent.
func readyTime(conds []metav1.Condition, typ string) metav1.Time {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.LastTransitionTime
	}
	return metav1.Time{}
}
