package app

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestGCPercentDefaultsUnlessGOGCIsSet(t *testing.T) {
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	t.Setenv("GOGC", "")
	debug.SetGCPercent(100)
	setGCPercent()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set (empty): GC percent %d, want it left at 100", got)
	}

	os.Unsetenv("GOGC") // t.Setenv above restores it
	setGCPercent()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, gcPercent)
	}
}
