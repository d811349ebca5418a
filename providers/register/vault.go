//go:build vault || !(aws || gcp || minimal)

package register

// The vault providers join here as they are built; until then the tag only
// records the selection.
func init() { selected = append(selected, "vault") }
