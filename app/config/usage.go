package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/eso-dev/eso/providers/plugin"
)

// Commands are eso's subcommands.
var Commands = []string{"providers", "version", "migrate", "explain", "check"}

// providerModeFlags and coreModeFlags are the flags of one mode only; the
// others apply to both.
var (
	providerModeFlags = []string{"grpc-bind-address", "tls-cert-file", "tls-key-file", "tls-client-ca-file", "insecure", "provider-kinds"}
	coreModeFlags     = []string{"metrics-secure", "leader-elect", "leader-election-id", "leader-election-namespace",
		"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period", "controller-class",
		"namespace", "system-namespace", "client-qps", "client-burst", "concurrent", "store-concurrent",
		"remote-providers-insecure", "provider-certificates-namespace", "provider-certificates-dns-names"}
)

// usage writes eso --help: the commands, then the flags by mode.
func usage(out io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(out, `Usage:
  eso [flags]                 run core mode: controllers with the providers in process
  eso --mode=provider [flags] serve the compiled-in providers over gRPC with mTLS
  eso providers [-o json]     list the providers and generators compiled in
  eso version                 print the version, commit, Go version and build tags (also --version)
  eso explain KIND/NAME -n NS explain an ExternalSecret, PushSecret or store: its chain, state and what to change
  eso check store NAME -n NS  validate a store's configuration and credentials once (also: check clusterstore NAME)
`)
	for _, group := range []struct {
		title string
		in    func(name string) bool
	}{
		{"Flags of both modes", func(n string) bool {
			return !slices.Contains(providerModeFlags, n) && !slices.Contains(coreModeFlags, n)
		}},
		{"Core mode", func(n string) bool { return slices.Contains(coreModeFlags, n) }},
		{"Provider mode (--mode=provider)", func(n string) bool { return slices.Contains(providerModeFlags, n) }},
	} {
		fmt.Fprintf(out, "\n%s:\n", group.title)
		fs.VisitAll(func(f *flag.Flag) {
			if !group.in(f.Name) {
				return
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && !strings.Contains(f.Usage, "(default") {
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(out, "  --%s\n      %s%s\n", f.Name, f.Usage, def)
		})
	}
}

// flagError is a parse error in one line: an unknown flag names the
// closest known one.
func flagError(err error, fs *flag.FlagSet) error {
	const unknown = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, unknown) {
		return fmt.Errorf("%w (eso --help lists the flags)", err)
	}
	name := strings.TrimPrefix(msg, unknown)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c := plugin.Closest(strings.TrimLeft(name, "-"), names); c != "" {
		return fmt.Errorf("unknown flag --%s: did you mean --%s?", strings.TrimLeft(name, "-"), c)
	}
	return errors.New("unknown flag --" + strings.TrimLeft(name, "-") + " (eso --help lists the flags)")
}
