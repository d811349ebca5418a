package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	if v, c := fromBuildInfo(info, "dev", "unknown"); v != "v1.2.3" || c != "abc123-dirty" {
		t.Errorf("from build info: %s %s", v, c)
	}
	if v, c := fromBuildInfo(info, "v9.9.9", "fff"); v != "v9.9.9" || c != "fff" {
		t.Errorf("ldflags lost to build info: %s %s", v, c)
	}
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	if v, c := fromBuildInfo(devel, "dev", "unknown"); v != "dev" || c != "unknown" {
		t.Errorf("a local build without VCS: %s %s", v, c)
	}
}
