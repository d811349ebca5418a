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

// Command is one of eso's subcommands as --help and the unknown-command
// error name it. main's command table is the one list of them; Parse is
// given it.
type Command struct {
	// Name is what follows eso on the command line.
	Name string
	// Args are its arguments in brief, for --help.
	Args string
	// Summary is one line saying what it does.
	Summary string
}

// commandNames lists the names of commands, for an error message.
func commandNames(commands []Command) []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.Name
	}
	return names
}

// providerModeFlags and coreModeFlags are the flags of one mode only; the
// others apply to both.
var (
	providerModeFlags = []string{"grpc-bind-address", "tls-cert-file", "tls-key-file", "tls-client-ca-file", "insecure", "provider-kinds"}
	coreModeFlags     = []string{"metrics-secure", "leader-elect", "leader-election-id", "leader-election-namespace",
		"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period", "shards", "controller-class",
		"namespace", "system-namespace", "client-qps", "client-burst", "concurrent", "store-concurrent",
		"remote-providers-insecure", "provider-certificates-namespace", "provider-certificates-dns-names", "rollout-restarts",
		"pprof-bind-address"}
)

// usage writes eso --help: the modes and commands, then the flags by mode.
func usage(out io.Writer, fs *flag.FlagSet, commands []Command) {
	lines := [][2]string{
		{"eso [flags]", "run core mode: controllers with the providers in process"},
		{"eso --mode=provider [flags]", "serve the compiled-in providers over gRPC with mTLS"},
	}
	for _, c := range commands {
		lines = append(lines, [2]string{strings.TrimSpace("eso " + c.Name + " " + c.Args), c.Summary})
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	fmt.Fprintln(out, "Usage:")
	for _, l := range lines {
		fmt.Fprintf(out, "  %-*s  %s\n", width, l[0], l[1])
	}
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
	fmt.Fprint(out, `
Exit codes:
  0  stopped by SIGTERM or SIGINT, or --help
  1  eso could not start or stopped on an error: a file a flag names, the API server, an address in use
  2  the command line is wrong: a flag, its value or a command; nothing was started
`)
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
