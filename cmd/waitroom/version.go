package main

import (
	"runtime/debug"
)

// version is set for releases with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module's build information.
var version = ""

// buildVersion is what --version prints and waitroom_build_info carries:
// the release version, else the module version (a go install of a tag),
// else the VCS revision of a source build, with "+dirty" for local changes.
func buildVersion() (ver, revision string) {
	info, ok := debug.ReadBuildInfo()
	if ok {
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && revision != "" {
			revision += "+dirty"
		}
	}
	switch {
	case version != "":
		return version, revision
	case ok && info.Main.Version != "" && info.Main.Version != "(devel)":
		return info.Main.Version, revision
	}
	return "devel", revision
}
