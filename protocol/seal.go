package protocol

import (
	"crypto/subtle"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// Sealed snapshots (opt-in): a start with options.seal_key_base64 seals
// every record of its snapshots under that key (snapshot/seal.go); every
// resume of them names the same key in policy (raw form) or auth (cached
// form). Hot and cold resumes check it alike, so a resume that would fail
// after a crash fails before one too.

// seals turns seal keys into Sealers, keeping the last one: deriving a
// Sealer's keys (HKDF, three times) would otherwise be paid by every
// request of a host that seals.
type seals struct {
	lastB64 string
	last    *snapshot.Sealer
}

// read reads the optional seal key of an object.
func (c *seals) read(f fields, where string) (*snapshot.Sealer, error) {
	s, ok, err := f.string(wire.FieldSealKeyBase64)
	if err != nil || !ok {
		return nil, err
	}
	// Constant time: the cached text is a host's key.
	if c.last != nil && subtle.ConstantTimeCompare([]byte(c.lastB64), []byte(s)) == 1 {
		return c.last, nil
	}
	key, err := decodeBase64(s)
	if err != nil {
		return nil, errorf(codeInvalidBase64, "%s.%s is not valid base64", where, wire.FieldSealKeyBase64)
	}
	seal, err := snapshot.NewSealer(key)
	if err != nil {
		return nil, errorf(codeInvalidSealKey, "%s.%s must decode to at least %d bytes", where, wire.FieldSealKeyBase64, snapshot.MinSealKeyBytes)
	}
	c.lastB64, c.last = s, seal
	return seal, nil
}
