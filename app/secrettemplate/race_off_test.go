//go:build !race

package secrettemplate

const raceEnabled = false
