package hosttest

import "github.com/mustard-sidecar/mustard-sidecar/internal/wire"

func sha256Hex(b []byte) string { return wire.SHA256Hex(b) }

func hmacHex(key []byte, msg string) string { return wire.Token(key, msg) }

// Token is the snapshot token for id under key.
func Token(key []byte, snapshotID string) string { return wire.Token(key, snapshotID) }
