package version

import (
	"regexp"
	"testing"
)

// The grammar of semver.org 2.0.0, as its own recommended expression.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

func TestVersionIsSemver(t *testing.T) {
	if !semver.MatchString(Version) {
		t.Fatalf("Version %q is not a semantic version", Version)
	}
	for _, bad := range []string{"v1.2.3", "1.2", "01.2.3", "1.2.3-", ""} {
		if semver.MatchString(bad) {
			t.Fatalf("the check accepts %q", bad)
		}
	}
}
