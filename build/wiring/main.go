// Command wiring writes the files of app/wiring that compile in
// what providers/catalog lists (make generate runs it from the module root).
// With -tags it prints the SDK selection tags instead, one per line, for
// scripts such as build/sizes.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/eso-dev/eso/providers/catalog"
)

func main() {
	listTags := flag.Bool("tags", false, "print the SDK selection tags and exit")
	flag.Parse()
	if *listTags {
		fmt.Println(strings.Join(catalog.TagNames(), "\n"))
		return
	}
	if err := write(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func write() error {
	files, err := catalog.Wiring()
	if err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(catalog.WiringDir, "zz_generated.*.go"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(catalog.WiringDir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
