package snapshot

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"io"

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

// Verifier checks key digests and tokens for one key. Its digest and HMAC
// state are computed once, so a host that resumes under the same key pays
// for one HMAC per request and nothing else. Not safe for concurrent use.
type Verifier struct {
	digest string
	mac    hash.Hash
	sum    [sha256.Size]byte
	hex    [2 * sha256.Size]byte
}

// NewVerifier prepares the checks for key.
func NewVerifier(key []byte) *Verifier {
	return &Verifier{digest: KeyDigest(key), mac: hmac.New(sha256.New, key)}
}

// VerifyDigest reports whether digest is the key's digest.
func (v *Verifier) VerifyDigest(digest string) bool {
	return subtle.ConstantTimeCompare([]byte(v.digest), []byte(digest)) == 1
}

// VerifyToken reports, in constant time, whether token authenticates id.
func (v *Verifier) VerifyToken(snapshotID, token string) bool {
	v.mac.Reset()
	io.WriteString(v.mac, snapshotID)
	hex.Encode(v.hex[:], v.mac.Sum(v.sum[:0]))
	return subtle.ConstantTimeCompare(v.hex[:], []byte(token)) == 1
}
