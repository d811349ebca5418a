//go:build race

package secrettemplate

// raceEnabled: the race detector slows CPU-bound code several times over,
// so timings measured under it say nothing about production.
const raceEnabled = true
