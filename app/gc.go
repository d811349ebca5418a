package app

import (
	"os"
	"runtime/debug"
)

// gcPercent is eso's default for GOGC: the heap may grow half its live
// size between collections, not all of it. eso's heap is mostly its caches,
// alive for the process's life, so Go's default of 100 lets its RSS reach
// about twice that; at 50, a first sync of 10,000 ExternalSecrets peaked
// about 30 MiB lower for no measurable CPU (make bench, README "Scaling
// out"). The chart's GOMEMLIMIT still bounds it near the pod's limit.
const gcPercent = 50

// setGCPercent applies gcPercent unless GOGC is set, which always wins.
func setGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
