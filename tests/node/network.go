package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// The cluster's network, all inside 198.18.0.0/15 (the range set aside for
// benchmarking, RFC 2544) on a bridge attached to no physical interface.
const (
	Bridge      = "eso-node0"
	NodeIP      = "198.18.0.1"
	PodCIDR     = "198.18.0.0/24"
	ServiceCIDR = "198.19.0.0/24"
	// APIServiceIP is the kubernetes Service's ClusterIP, the first of
	// ServiceCIDR.
	APIServiceIP = "198.19.0.1"
	// Range is everything the cluster may address: the host routes all of
	// it to the bridge, and the Pods route nothing else.
	Range = "198.18.0.0/15"
)

// guardRule drops anything forwarded from the bridge to another interface:
// with forwarding on (Services need it), nothing a Pod sends leaves the
// machine. The mangle table runs before kube-proxy's filter rules.
var guardRule = []string{"FORWARD", "-i", Bridge, "!", "-o", Bridge, "-m", "comment", "--comment", "eso-node: nothing leaves the bridge", "-j", "DROP"}

// sysctls the cluster needs: forwarding for Service traffic between Pods,
// bridged traffic through iptables so that replies are un-NATed.
var sysctls = map[string]string{
	"/proc/sys/net/ipv4/ip_forward":                 "1",
	"/proc/sys/net/bridge/bridge-nf-call-iptables":  "1",
	"/proc/sys/net/bridge/bridge-nf-call-ip6tables": "1",
}

// network is the host side of the cluster's network, and what it replaced.
type network struct {
	savedSysctls map[string]string
}

func setUpNetwork() (*network, error) {
	n := &network{savedSysctls: map[string]string{}}
	steps := [][]string{
		{"ip", "link", "add", Bridge, "type", "bridge"},
		{"ip", "addr", "add", NodeIP + "/24", "dev", Bridge},
		{"ip", "link", "set", Bridge, "up"},
		{"ip", "route", "add", Range, "dev", Bridge},
		append([]string{"iptables", "-t", "mangle", "-I"}, guardRule...),
	}
	for _, s := range steps {
		if _, err := run(s[0], s[1:]...); err != nil {
			return n, err
		}
	}
	for path, value := range sysctls {
		old, err := os.ReadFile(path)
		if err != nil {
			return n, err
		}
		n.savedSysctls[path] = strings.TrimSpace(string(old))
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			return n, err
		}
	}
	return n, nil
}

// restoreSysctls puts back the sysctls the cluster changed.
func (n *network) restoreSysctls() error {
	var errs []error
	for path, value := range n.savedSysctls {
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeNetworkLeftovers removes what a cluster of this package leaves in
// the host's network, also one whose test process died: the bridge (its
// routes go with it), the guard rule, the chains kube-proxy and the CNI
// plugins added, and the Pods' network namespaces.
func removeNetworkLeftovers() error {
	var errs []error
	for {
		if _, err := run("iptables", append([]string{"-t", "mangle", "-D"}, guardRule...)...); err != nil {
			break
		}
	}
	errs = append(errs, removeChains("KUBE-", "CNI-"))
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		if _, err := run("ip", "link", "del", Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	namespaces, _ := filepath.Glob("/run/netns/cni-*")
	for _, ns := range namespaces {
		_ = unmountUnder(ns)
		if err := os.Remove(ns); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeChains deletes, in every table, each chain whose name starts with
// one of prefixes and every rule that jumps to one.
func removeChains(prefixes ...string) error {
	var errs []error
	for _, table := range []string{"filter", "nat", "mangle"} {
		out, err := run("iptables-save", "-t", table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var chains []string
		var jumps [][]string
		for _, line := range strings.Split(out, "\n") {
			fields := strings.Fields(line)
			switch {
			case strings.HasPrefix(line, ":") && hasAnyPrefix(strings.TrimPrefix(fields[0], ":"), prefixes):
				chains = append(chains, strings.TrimPrefix(fields[0], ":"))
			case strings.HasPrefix(line, "-A ") && !hasAnyPrefix(fields[1], prefixes) && jumpsTo(fields, prefixes):
				jumps = append(jumps, fields[1:])
			}
		}
		for _, rule := range jumps {
			if _, err := run("iptables", append([]string{"-t", table, "-D"}, unquote(rule)...)...); err != nil {
				errs = append(errs, err)
			}
		}
		for _, c := range chains {
			_, _ = run("iptables", "-t", table, "-F", c)
		}
		for _, c := range chains {
			if _, err := run("iptables", "-t", table, "-X", c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func jumpsTo(fields, prefixes []string) bool {
	for i, f := range fields {
		if (f == "-j" || f == "-g") && i+1 < len(fields) && hasAnyPrefix(fields[i+1], prefixes) {
			return true
		}
	}
	return false
}

// unquote joins iptables-save's quoted comments back into single arguments.
func unquote(fields []string) []string {
	var out []string
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.HasPrefix(f, `"`) && !(len(f) > 1 && strings.HasSuffix(f, `"`)) {
			parts := []string{f}
			for i+1 < len(fields) {
				i++
				parts = append(parts, fields[i])
				if strings.HasSuffix(fields[i], `"`) {
					break
				}
			}
			f = strings.Join(parts, " ")
		}
		out = append(out, strings.Trim(f, `"`))
	}
	return out
}
