package host

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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
type SealKey struct {
	b      []byte
	digest string
}

// NewSealKey returns a SealKey holding a copy of b, which must be at least
// MinSealKeyBytes long.
func NewSealKey(b []byte) (SealKey, error) {
	if len(b) < MinSealKeyBytes {
		return SealKey{}, fmt.Errorf("seal key must be at least %d bytes, got %d", MinSealKeyBytes, len(b))
	}
	k := SealKey{b: append([]byte(nil), b...)}
	sum := sha256.Sum256(k.b)
	k.digest = hex.EncodeToString(sum[:])
	return k, nil
}

// GenerateSealKey returns a new random 32-byte seal key.
func GenerateSealKey() (SealKey, error) {
	b := make([]byte, MinSealKeyBytes)
	if _, err := rand.Read(b); err != nil {
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
func (k SealKey) String() string {
	if k.IsZero() {
		return "host.SealKey(zero)"
	}
	return "host.SealKey(sha256:" + k.digest[:16] + "…)"
}

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
