package host

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
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
type Key struct{ secret }

// NewKey returns a Key holding a copy of b, which must be at least
// MinKeyBytes long.
func NewKey(b []byte) (Key, error) {
	s, err := newSecret(b, MinKeyBytes, "snapshot key")
	return Key{s}, err
}

// GenerateKey returns a new random 32-byte key.
func GenerateKey() (Key, error) {
	b, err := randomBytes(MinKeyBytes)
	if err != nil {
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
func (k Key) Token(snapshotID string) string { return wire.Token(k.b, snapshotID) }

// String names the key by its digest, so that printing or logging a Key
// never shows the key itself.
func (k Key) String() string { return k.name("host.Key") }

// GoString is String, for %#v.
func (k Key) GoString() string { return k.String() }

// MinSealKeyBytes is the shortest seal key NewSealKey accepts, as the
// sidecar does.
const MinSealKeyBytes = 32

// SealKey is a key that seals snapshots (the sealed snapshots extension).
// An execution started with one has every snapshot encrypted and
// authenticated under it, so that the bytes at rest (a Store, a queue, a
// backup) hide the program, its inputs, the capability calls and the
// answers, showing only their sizes. Every resume of those snapshots, hot
// or from bytes, must send the same key: the sidecar refuses a resume
// without it ("snapshot is sealed and no seal key was given"), with
// another ("snapshot was sealed under another seal key"), and a seal key
// for a snapshot that is not sealed ("snapshot is not sealed but a seal
// key was given"). The key never appears in a snapshot.
//
// The zero SealKey means no sealing. A SealKey is separate from the
// snapshot Key, which proves the host accepted the bytes; sealing keeps
// them confidential. Keep it secret, and keep it for as long as the
// executions sealed under it must stay resumable: a snapshot is sealed
// under one key for its whole life.
type SealKey struct{ secret }

// NewSealKey returns a SealKey holding a copy of b, which must be at least
// MinSealKeyBytes long.
func NewSealKey(b []byte) (SealKey, error) {
	s, err := newSecret(b, MinSealKeyBytes, "seal key")
	return SealKey{s}, err
}

// GenerateSealKey returns a new random 32-byte seal key.
func GenerateSealKey() (SealKey, error) {
	b, err := randomBytes(MinSealKeyBytes)
	if err != nil {
		return SealKey{}, err
	}
	return NewSealKey(b)
}

// IsZero reports whether k is the zero SealKey (no sealing).
func (k SealKey) IsZero() bool { return k.b == nil }

// Bytes returns a copy of the key bytes.
func (k SealKey) Bytes() []byte { return append([]byte(nil), k.b...) }

// String names the key by a prefix of its SHA-256, so that printing or
// logging a SealKey never shows the key itself.
func (k SealKey) String() string { return k.name("host.SealKey") }

// GoString is String, for %#v.
func (k SealKey) GoString() string { return k.String() }

// wire returns the key as seal_key_base64 sends it; "" for the zero key,
// which leaves the field out.
func (k SealKey) wire() string {
	if k.IsZero() {
		return ""
	}
	return base64.StdEncoding.EncodeToString(k.b)
}

// secret is what both kinds of key hold: a private copy of the bytes and
// their SHA-256, by which a key is named without being shown.
type secret struct {
	b      []byte
	digest string
}

func newSecret(b []byte, min int, what string) (secret, error) {
	if len(b) < min {
		return secret{}, fmt.Errorf("%s must be at least %d bytes, got %d", what, min, len(b))
	}
	s := secret{b: append([]byte(nil), b...)}
	s.digest = wire.KeyDigest(s.b)
	return s, nil
}

func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// name is a key's String: its type and a prefix of its digest.
func (s secret) name(typ string) string {
	if s.b == nil {
		return typ + "(zero)"
	}
	return typ + "(sha256:" + s.digest[:16] + "…)"
}
