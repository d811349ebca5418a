//go:build !race

package secrettemplate

// raceSlowdown is 1 in every build eso ships: see race.go.
const raceSlowdown = 1
