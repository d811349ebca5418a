package vaulttest

import (
	"net/http"
	"strings"

	"github.com/eso-dev/eso/providers/plugin"
)

// WriteEndlessSecret answers a KV v2 read as a tenant's server might, with
// a value that does not end: 32 times plugin.MaxResponseBytes of "x",
// then silence until the client goes. A client without the bound would
// hold all of it while it waits.
func WriteEndlessSecret(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"data":{"data":{"v":"`))
	chunk := []byte(strings.Repeat("x", 4096))
	for range 32 * plugin.MaxResponseBytes / len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
	<-r.Context().Done()
}
