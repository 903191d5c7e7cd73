// Package version holds the sidecar's release version: the one string that
// ping's sidecar_version and --version report.
package version

// Version is the sidecar's semantic version (semver.org, without a leading
// "v"). A release build sets it without editing the source:
//
//	go build -ldflags "-X github.com/mustard-sidecar/mustard-sidecar/internal/version.Version=1.2.3" ./cmd/mustard-sidecar
var Version = "0.3.0"
