package host

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// MinKeyBytes is the shortest snapshot key NewKey accepts: an HMAC-SHA256
// key shorter than its output weakens the token.
const MinKeyBytes = 32

// Key is the host's snapshot key. A sidecar resumes a snapshot only with a
// token proving the host accepted it: the lowercase hex HMAC-SHA256 of the
// snapshot id under this key. Every resume sends the key, its digest and
// the token; the key never appears in a snapshot. The zero Key is not
// usable.
//
// Keep one key for as long as snapshots signed with it must stay
// resumable, and keep it secret: whoever holds it can make the sidecar
// resume any snapshot bytes.
type Key struct {
	b      []byte
	digest string
}

// NewKey returns a Key holding a copy of b, which must be at least
// MinKeyBytes long.
func NewKey(b []byte) (Key, error) {
	if len(b) < MinKeyBytes {
		return Key{}, fmt.Errorf("snapshot key must be at least %d bytes, got %d", MinKeyBytes, len(b))
	}
	k := Key{b: append([]byte(nil), b...)}
	sum := sha256.Sum256(k.b)
	k.digest = hex.EncodeToString(sum[:])
	return k, nil
}

// GenerateKey returns a new random 32-byte key.
func GenerateKey() (Key, error) {
	b := make([]byte, MinKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return Key{}, err
	}
	return NewKey(b)
}

// IsZero reports whether k is the zero Key.
func (k Key) IsZero() bool { return k.b == nil }

// Bytes returns a copy of the key bytes.
func (k Key) Bytes() []byte { return append([]byte(nil), k.b...) }

// Digest returns the lowercase hex SHA-256 of the key (snapshot_key_digest).
func (k Key) Digest() string { return k.digest }

// Token returns the lowercase hex HMAC-SHA256 of snapshotID's text under
// the key (snapshot_token).
func (k Key) Token(snapshotID string) string {
	m := hmac.New(sha256.New, k.b)
	m.Write([]byte(snapshotID))
	return hex.EncodeToString(m.Sum(nil))
}

// String names the key by its digest, so that printing or logging a Key
// never shows the key itself.
func (k Key) String() string {
	if k.IsZero() {
		return "host.Key(zero)"
	}
	return "host.Key(sha256:" + k.digest[:16] + "…)"
}

// GoString is String, for %#v.
func (k Key) GoString() string { return k.String() }
