// Command coredns is the cluster DNS of the end-to-end tests' node: CoreDNS
// with only the plugins a cluster's Service names need (kubernetes, cache,
// errors, health, ready, loop detection off; no forwarding, so no query
// leaves the machine).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"errors", "health", "ready", "cache", "kubernetes"}
}

func main() { coremain.Run() }
