package snapshot

import (
	"crypto/subtle"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// KeyDigest is the lowercase hex SHA-256 of a snapshot key.
func KeyDigest(key []byte) string { return wire.KeyDigest(key) }

// Token is the lowercase hex HMAC-SHA256 of the snapshot id under key: the
// proof that a host accepted a snapshot.
func Token(key []byte, snapshotID string) string { return wire.Token(key, snapshotID) }

// VerifyKeyDigest reports whether digest is the key's digest.
func VerifyKeyDigest(key []byte, digest string) bool {
	return subtle.ConstantTimeCompare([]byte(KeyDigest(key)), []byte(digest)) == 1
}

// VerifyToken reports, in constant time, whether token authenticates id
// under key.
func VerifyToken(key []byte, snapshotID, token string) bool {
	return subtle.ConstantTimeCompare([]byte(Token(key, snapshotID)), []byte(token)) == 1
}

// Verifier checks key digests and tokens for one key (wire.Verifier).
type Verifier = wire.Verifier

// NewVerifier prepares the checks for key.
func NewVerifier(key []byte) *Verifier { return wire.NewVerifier(key) }
