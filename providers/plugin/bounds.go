package plugin

import "fmt"

// Bounds on what eso reads from a provider. A store may point at a server
// its tenant runs (Vault, an AWS or GCP endpoint, a provider process), so
// every answer is bounded before eso decodes or keeps it.
const (
	// MaxResponseBytes caps one HTTP response body or gRPC message read
	// from a provider endpoint: twice the 1 MiB a Kubernetes Secret holds,
	// room for the envelope and JSON escaping around any value that fits.
	MaxResponseBytes = 2 << 20
	// MaxFindDepth is how many folder levels below find.path a find descends.
	MaxFindDepth = 16
	// MaxFindListed is how many names (keys and folders) a find looks at.
	MaxFindListed = 1000
	// MaxFindResults is how many secrets a find returns.
	MaxFindResults = 500
	// MaxFindBytes is how many value bytes a find returns: four times what
	// one Secret can hold.
	MaxFindBytes = 4 << 20
)

// ErrTooLarge: an answer exceeds one of the bounds above. It is an
// ErrNotSupported, so the ExternalSecret shows a ProviderError and waits for
// a change instead of retrying: the same answer would come back. The error
// names the bound, never the value.
var ErrTooLarge error = tooLargeError{}

type tooLargeError struct{}

func (tooLargeError) Error() string { return "too large" }

// Is makes ErrTooLarge an ErrNotSupported.
func (tooLargeError) Is(target error) bool { return target == ErrNotSupported }

// FormatBytes writes a bound as people read it: "2 MiB", "512 KiB", "100 B".
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d B", n)
	}
}
