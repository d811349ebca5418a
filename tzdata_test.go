//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/eso-dev/eso/app/secrettemplate"
)

const tzChildEnv = "ESO_TEST_TZ_CHILD"

// TestDateInZoneWithoutSystemZones: eso's image has no zone database, so
// a template's dateInZone must work from the one linked into the binary.
// The test runs itself again in a mount namespace where every place Go
// looks for zones (ZONEINFO, the system's directories, GOROOT's zip) is
// empty, and renders Europe/Berlin in winter and summer.
func TestDateInZoneWithoutSystemZones(t *testing.T) {
	if os.Getenv(tzChildEnv) == "1" {
		dateInZoneWithoutSystemZones(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDateInZoneWithoutSystemZones$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZONEINFO=") && !strings.HasPrefix(kv, "GOROOT=") && !strings.HasPrefix(kv, "TZ=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, tzChildEnv+"=1", "ZONEINFO="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		// Unprivileged: a user namespace lets the child mount over the
		// zone directories in its own mount namespace.
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		t.Skipf("cannot start a process in a mount namespace here: %v", err)
	case strings.Contains(string(out), "--- SKIP"):
		t.Skipf("the child skipped:\n%s", out)
	case err != nil:
		t.Fatalf("without a system zone database: %v\n%s", err, out)
	}
}

func dateInZoneWithoutSystemZones(t *testing.T) {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Skipf("cannot make the mount namespace private: %v", err)
	}
	// Where Go's time package looks, besides ZONEINFO (an empty directory).
	hide := []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"}
	if goroot := runtime.GOROOT(); goroot != "" {
		hide = append(hide, filepath.Join(goroot, "lib", "time"))
	}
	for _, dir := range hide {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=4k"); err != nil {
			t.Skipf("cannot hide %s: %v", dir, err)
		}
	}
	for _, dir := range hide {
		if _, err := os.Stat(filepath.Join(dir, "Europe", "Berlin")); err == nil {
			t.Fatalf("%s still holds Europe/Berlin", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "zoneinfo.zip")); err == nil {
			t.Fatalf("%s still holds zoneinfo.zip", dir)
		}
	}

	tpl, err := secrettemplate.Compile("zones",
		`{{ dateInZone "2006-01-02 15:04 MST" 1767225600 "Europe/Berlin" }}|{{ dateInZone "2006-01-02 15:04 MST" 1782864000 "Europe/Berlin" }}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Execute(nil)
	if err != nil {
		t.Fatalf("dateInZone Europe/Berlin: %v", err)
	}
	if want := "2026-01-01 01:00 CET|2026-07-01 02:00 CEST"; got != want {
		t.Errorf("dateInZone rendered %q, want %q", got, want)
	}
}
