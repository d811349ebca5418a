//go:build aws || !(gcp || vault || minimal)

package register

// The aws providers join here as they are built; until then the tag only
// records the selection.
func init() { selected = append(selected, "aws") }
