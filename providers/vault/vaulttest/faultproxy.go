package vaulttest

import (
	"fmt"
	"net/http"

	"github.com/eso-dev/eso/tests/faultproxy"
)

// Outage is a fault proxy's answer as Vault gives it for status (503 sealed
// or unavailable, 429 rate limited): a JSON errors list.
func Outage(status int) faultproxy.Fault {
	return faultproxy.Fault{Status: status, Header: map[string]string{"Content-Type": "application/json"},
		Body: fmt.Sprintf(`{"errors":[%q]}`, "injected: "+http.StatusText(status))}
}
