//go:build !unix

package secrettemplate

import "time"

// processCPU is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
