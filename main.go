// Command eso is a Kubernetes secrets operator in one static binary.
//
//	eso [flags]            run (--mode=core, the default: controllers + in-process providers)
//	eso --mode=provider    serve the compiled-in providers and generators over gRPC with mTLS
//	eso providers          list the providers and generators compiled into this binary
//	eso version            print version, commit, Go version and build tags (also --version)
//	eso migrate            move external-secrets.io/v1 stores and their users to v2alpha1 stores
//	eso render             print the Secret an ExternalSecret would sync, offline
//	eso explain            explain an object's state and what eso would do with it
//	eso check              check manifests for what eso would refuse, before applying them
//
// The commands are one table, commands below: dispatch, --help and the
// unknown-command error all read it, and main_test.go checks this comment
// against it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/dig"
	"go.uber.org/fx"

	// CA roots for images without a system bundle (eso's is built from
	// scratch); a system bundle, where there is one, takes precedence.
	_ "golang.org/x/crypto/x509roots/fallback"
	// Go's time zone database, for the same images: templates' dateInZone
	// needs it, and a system database, where there is one, takes precedence.
	_ "time/tzdata"

	"github.com/eso-dev/eso/app"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/cli/explain"
	"github.com/eso-dev/eso/app/cli/render"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/wiring"
)

func main() {
	if isKubectlPlugin(os.Args[0]) {
		os.Exit(kubectlPlugin(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one of eso's subcommands: how --help shows it and the
// function it runs (args without the command's name), which returns the
// exit code.
type command struct {
	config.Command
	// aliases also run it (version: --version).
	aliases []string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands are eso's subcommands, in the order --help lists them.
var commands = []command{
	{Command: config.Command{Name: "providers", Args: "[-o json]", Summary: "list the providers and generators compiled in"},
		run: providers},
	{Command: config.Command{Name: "version", Summary: "print the version, commit, Go version and build tags (also --version)"},
		aliases: []string{"--version"},
		run: func(_ []string, stdout, _ io.Writer) int {
			app.PrintVersion(stdout)
			return 0
		}},
	{Command: config.Command{Name: "migrate", Args: "[--apply]", Summary: "move external-secrets.io/v1 stores and their users to v2alpha1 stores"},
		run: wiring.Migrate},
	{Command: config.Command{Name: "render", Args: "-f FILE --data FILE", Summary: "print the Secret an ExternalSecret would sync, or what a PushSecret would push"},
		run: func(args []string, stdout, stderr io.Writer) int {
			return render.Run(args, os.Stdin, stdout, stderr, thisBuild())
		}},
	{Command: config.Command{Name: "explain", Args: "KIND/NAME [-n NS]", Summary: "explain an object's chain (store, configuration, credentials), each link's state and what to change"},
		run: func(args []string, stdout, stderr io.Writer) int {
			return explain.Explain(thisBuild(), args, stdout, stderr)
		}},
	{Command: config.Command{Name: "check", Args: "store|clusterstore NAME", Summary: "validate a store's configuration and credentials once, as the controller does"},
		run: func(args []string, stdout, stderr io.Writer) int {
			return explain.Check(thisBuild(), args, stdout, stderr)
		}},
}

// thisBuild is what the command line resolves and validates stores with:
// this binary's plugins and v1 store layer.
func thisBuild() binary.Build {
	return binary.Build{Plugins: wiring.Plugins(), V1Layer: wiring.V1Layer()}
}

// lookup finds the command name runs.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.Name == name || slices.Contains(c.aliases, name) {
			return c, true
		}
	}
	return command{}, false
}

// isKubectlPlugin reports whether eso runs as `kubectl eso` (kubectl runs
// the kubectl-eso on PATH).
func isKubectlPlugin(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == "kubectl-eso"
}

// kubectlPlugin is eso as `kubectl eso`: its commands, but never the
// operator, which `kubectl eso` without a command would otherwise start.
func kubectlPlugin(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if c, ok := lookup(args[0]); ok {
			return c.run(args[1:], stdout, stderr)
		}
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.Name
	}
	fmt.Fprintln(stderr, "usage: kubectl eso COMMAND, one of: "+strings.Join(names, ", ")+" (eso --help says what each does)")
	return 2
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if c, ok := lookup(args[0]); ok {
			return c.run(args[1:], stdout, stderr)
		}
	}
	listed := make([]config.Command, len(commands))
	for i, c := range commands {
		listed[i] = c.Command
	}
	cfg, err := config.Parse(args, stdout, listed...)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "eso:", err)
		return 2
	}
	application, err := app.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "eso:", err)
		return 2
	}
	return serve(application, stderr)
}

// providers is `eso providers [-o table|json]`.
func providers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eso providers", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	output := fs.String("o", "table", "output format: table or json")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (*output != "table" && *output != "json") {
		fmt.Fprintln(stderr, "eso: usage: eso providers [-o table|json]")
		return 2
	}
	print := app.PrintProviders
	if *output == "json" {
		print = app.PrintProvidersJSON
	}
	if err := print(stdout); err != nil {
		fmt.Fprintln(stderr, "eso:", err)
		return 1
	}
	return 0
}

// serve starts the application, waits for a signal or for a module to shut it
// down, and stops it. Unlike fx's Run it reports why start-up failed instead
// of exiting silently.
func serve(application *fx.App, stderr io.Writer) int {
	if err := application.Err(); err != nil {
		// The root cause reads better than fx's chain of constructor names.
		fmt.Fprintln(stderr, "eso:", dig.RootCause(err))
		return 1
	}
	startCtx, cancel := context.WithTimeout(context.Background(), application.StartTimeout())
	defer cancel()
	if err := application.Start(startCtx); err != nil {
		fmt.Fprintln(stderr, "eso: starting:", err)
		return 1
	}
	signal := <-application.Wait()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), application.StopTimeout())
	defer cancelStop()
	if err := application.Stop(stopCtx); err != nil {
		fmt.Fprintln(stderr, "eso: stopping:", err)
		return 1
	}
	return signal.ExitCode
}
