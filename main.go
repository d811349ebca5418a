// Command eso is a Kubernetes secrets operator in one static binary.
//
//	eso [flags]            run (--mode=core, the default: controllers + in-process providers)
//	eso providers          list the providers compiled into this binary
//	eso version            print version, commit, Go version and build tags
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/eso-dev/eso/app"
	"github.com/eso-dev/eso/app/config"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "providers":
			if err := app.PrintProviders(stdout); err != nil {
				fmt.Fprintln(stderr, "eso:", err)
				return 1
			}
			return 0
		case "version":
			app.PrintVersion(stdout)
			return 0
		}
	}
	cfg, err := config.Parse(args, stderr)
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
	application.Run()
	return 0
}
