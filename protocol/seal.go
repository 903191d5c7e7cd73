package protocol

import (
	"crypto/subtle"
	"errors"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
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

// checkSeal compares the seal of a snapshot the session holds with the
// resume's.
func checkSeal(held, given *snapshot.Sealer) error {
	switch {
	case held != nil && given == nil:
		return sealError(snapshot.ErrSealedNeedsKey)
	case held == nil && given != nil:
		return sealError(snapshot.ErrNotSealed)
	case held != nil && !held.Same(given):
		return sealError(snapshot.ErrSealKey)
	}
	return nil
}

// sealError turns a seal mismatch into its request error; other loading
// failures are the snapshot's (Serialization).
func sealError(err error) error {
	for _, e := range []struct {
		err  error
		code code
	}{
		{snapshot.ErrSealedNeedsKey, codeSealKeyRequired},
		{snapshot.ErrNotSealed, codeSnapshotNotSealed},
		{snapshot.ErrSealKey, codeWrongSealKey},
	} {
		if errors.Is(err, e.err) {
			return wrapError(e.code, e.err)
		}
	}
	return nil
}

// loadSnapshot decodes authenticated snapshot bytes, opening them with
// seal when sealed.
func loadSnapshot(raw []byte, seal *snapshot.Sealer) (*snapshot.Snapshot, error) {
	snap, err := snapshot.Load(raw, seal)
	if err != nil {
		if e := sealError(err); e != nil {
			return nil, e
		}
		return nil, &engine.Error{Kind: engine.KindSerialization, Message: err.Error()}
	}
	return snap, nil
}
