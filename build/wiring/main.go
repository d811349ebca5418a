// Command wiring writes what follows from providers/catalog (make generate
// runs it from the module root, after the CRDs): the files of app/wiring
// that compile the catalog in, and the RBAC markers granting every catalog
// kind in core's and the provider process's roles. With -tags it prints the
// SDK selection tags instead, one per line, for scripts such as
// build/sizes.sh.
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
	if err := write("apis/crds"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func write(crdDir string) error {
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
	plurals, err := catalog.ReadPlurals(crdDir)
	if err != nil {
		return err
	}
	for _, role := range catalog.RBACRoles {
		content, err := catalog.RBAC(role, plurals)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(role.Dir, catalog.RBACFile), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
