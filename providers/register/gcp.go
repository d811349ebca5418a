//go:build gcp || !(aws || vault || minimal)

package register

// The gcp providers join here as they are built; until then the tag only
// records the selection.
func init() { selected = append(selected, "gcp") }
