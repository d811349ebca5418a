// Command eso is a Kubernetes secrets operator in one static binary.
//
//	eso [flags]            run (--mode=core, the default: controllers + in-process providers)
//	eso --mode=provider    serve the compiled-in providers and generators over gRPC with mTLS
//	eso providers [-o json] list the providers compiled into this binary
//	eso version            print version, commit, Go version and build tags (also --version)
//	eso migrate [--apply]  move external-secrets.io/v1 stores and their users to v2alpha1 stores
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/dig"
	"go.uber.org/fx"

	// CA roots for images without a system bundle (eso's is built from
	// scratch); a system bundle, where there is one, takes precedence.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/eso-dev/eso/app"
	"github.com/eso-dev/eso/app/cli/explain"
	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/app/wiring"
)

func main() {
	if isKubectlPlugin(os.Args[0]) {
		os.Exit(kubectlPlugin(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
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
		switch args[0] {
		case "explain", "check", "providers", "version", "--version", "migrate":
			return run(args, stdout, stderr)
		}
	}
	fmt.Fprintln(stderr, "usage: kubectl eso explain KIND/NAME | check store|clusterstore NAME | providers | version | migrate")
	return 2
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "providers":
			return providers(args[1:], stdout, stderr)
		case "version", "--version":
			app.PrintVersion(stdout)
			return 0
		case "migrate":
			return wiring.Migrate(args[1:], stdout, stderr)
		case "explain":
			return explain.Explain(args[1:], stdout, stderr)
		case "check":
			return explain.Check(args[1:], stdout, stderr)
		}
	}
	cfg, err := config.Parse(args, stdout)
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
