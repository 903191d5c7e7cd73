package protocol

import (
	"crypto/subtle"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// A resume's authentication (contract step 3): the host proves with an
// HMAC token that it accepted the snapshot it resumes.

// authFields are the four authentication fields of a resume.
type authFields struct {
	snapshotID, keyB64, digest, token  string
	hasID, hasKey, hasDigest, hasToken bool
}

// errTampered is the one answer to a snapshot the host's token does not
// authenticate.
var errTampered = errorf(codeTamperedSnapshot, "raw snapshot restore rejected a tampered or unauthenticated snapshot")

// keys verifies resumes: the pinned key's verifier, and the last key a
// host sent with its own (hosts use one key, so its digest and HMAC state
// are computed once, not per request).
type keys struct {
	pinned  *wire.Verifier
	lastB64 string
	last    *wire.Verifier
}

// sent returns the verifier of a key sent as base64.
func (k *keys) sent(keyB64 string) (*wire.Verifier, error) {
	// Constant time: the cached text is a host's key.
	if k.last != nil && subtle.ConstantTimeCompare([]byte(k.lastB64), []byte(keyB64)) == 1 {
		return k.last, nil
	}
	key, err := decodeBase64(keyB64)
	if err != nil {
		return nil, errorf(codeInvalidBase64, "snapshot_key_base64 is not valid base64")
	}
	k.lastB64, k.last = keyB64, wire.NewVerifier(key)
	return k.last, nil
}

// authenticate is step 3 of a resume. With a pinned key the digest must be
// the pinned key's, and a key sent along must be that key (it must match
// the digest); the token is checked under the pinned key.
func (k *keys) authenticate(a authFields, snapID string) error {
	switch {
	case !a.hasID:
		return errorf(codeMissingAuth, "raw snapshot restore requires snapshot_id")
	case !a.hasKey && k.pinned == nil:
		return errorf(codeMissingAuth, "raw snapshot restore requires snapshot_key_base64")
	case !a.hasToken:
		return errorf(codeMissingAuth, "raw snapshot restore requires snapshot_token")
	case !a.hasDigest:
		return errorf(codeMissingAuth, "raw snapshot restore requires snapshot_key_digest")
	}
	if a.snapshotID != snapID {
		return errTampered
	}
	v := k.pinned
	if a.hasKey {
		sent, err := k.sent(a.keyB64)
		if err != nil {
			return err
		}
		if !sent.VerifyDigest(a.digest) {
			return errMismatchedDigest
		}
		if v == nil {
			v = sent
		}
	}
	if k.pinned != nil && !k.pinned.VerifyDigest(a.digest) {
		return errMismatchedDigest
	}
	if !v.VerifyToken(snapID, a.token) {
		return errTampered
	}
	return nil
}

var errMismatchedDigest = errorf(codeKeyDigestMismatch, "raw snapshot restore rejected a mismatched snapshot key digest")
