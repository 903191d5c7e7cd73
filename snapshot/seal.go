package snapshot

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/internal/seal"
)

// A sealed snapshot is the journal with every item sealed on its own, so
// that it stays append-only (snapshot k+1 is snapshot k plus new records)
// while its bytes at rest reveal only sizes:
//
//	envelope ["mustard-sealed-snapshot", SealVersion, key_id: bytes(8)]
//	then one record per journal item (header, pending, outcome, ...):
//	record   bytes(nonce(24) || XChaCha20-Poly1305 ciphertext and tag)
//
// Record i is sealed with associated data binding it to its place:
//
//	"mustard-sealed-record" || u64 BE i || SHA-256(every byte before it)
//
// so records cannot be reordered, dropped from the middle or moved between
// snapshots. Snapshots must stay deterministic (a resume replayed anywhere
// yields the same bytes), so nonces cannot be random; they are synthetic
// instead: HMAC-SHA256(nonce key, associated data || plaintext), cut to 24
// bytes. A nonce repeats only for the same plaintext in the same place after
// the same history, where the record repeats whole, so the cipher never
// sees one nonce with two plaintexts. The encryption key, nonce key and key
// id are derived from the host's seal key with HKDF-SHA256, one per purpose;
// a record is the envelope of package internal/seal.
const (
	SealMagic   = "mustard-sealed-snapshot"
	SealVersion = 1

	// MinSealKeyBytes is the shortest seal key accepted.
	MinSealKeyBytes = 32

	keyIDBytes   = 8
	recordAD     = "mustard-sealed-record"
	sealInfo     = "mustard-sidecar seal v1 "
	sealOverhead = seal.Overhead
)

// Sealing errors, wrapped with an offset in a *FormatError where one
// applies.
var (
	ErrSealKeyTooShort = fmt.Errorf("seal key must be at least %d bytes", MinSealKeyBytes)
	ErrSealedNeedsKey  = errors.New("snapshot is sealed and no seal key was given")
	ErrNotSealed       = errors.New("snapshot is not sealed but a seal key was given")
	ErrSealKey         = errors.New("snapshot was sealed under another seal key")
	ErrSealedRecord    = errors.New("sealed record failed authentication")
	ErrSealedFormat    = errors.New("malformed sealed snapshot")
)

// Sealer seals and opens the records of sealed snapshots under one key.
type Sealer struct {
	box      *seal.Box
	nonceKey []byte
	keyID    [keyIDBytes]byte
}

// NewSealer derives the per-purpose keys from a host's seal key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) < MinSealKeyBytes {
		return nil, ErrSealKeyTooShort
	}
	derive := func(purpose string, n int) []byte { return seal.Derive(key, sealInfo+purpose, n) }
	box, err := seal.New(key, sealInfo+"encryption")
	if err != nil {
		return nil, err
	}
	s := &Sealer{box: box, nonceKey: derive("nonce", 32)}
	copy(s.keyID[:], derive("key id", keyIDBytes))
	return s, nil
}

// Same reports whether two sealers use the same key.
func (s *Sealer) Same(o *Sealer) bool {
	return s != nil && o != nil && subtle.ConstantTimeCompare(s.keyID[:], o.keyID[:]) == 1 &&
		subtle.ConstantTimeCompare(s.nonceKey, o.nonceKey) == 1
}

// IsSealed reports whether b starts like a sealed snapshot.
func IsSealed(b []byte) bool {
	r := detcbor.NewReader(b)
	if r.Array(3) != nil {
		return false
	}
	magic, err := r.Text()
	return err == nil && magic == SealMagic
}

func (s *Sealer) appendEnvelope(b []byte) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorArray, 3)
	b = detcbor.AppendText(b, SealMagic)
	b = detcbor.AppendUint(b, SealVersion)
	return detcbor.AppendBytes(b, s.keyID[:])
}

func recordAssociatedData(index uint64, prefixHash []byte) []byte {
	ad := make([]byte, 0, len(recordAD)+8+sha256.Size)
	ad = append(ad, recordAD...)
	ad = binary.BigEndian.AppendUint64(ad, index)
	return append(ad, prefixHash...)
}

// appendRecord seals plaintext as record index, after bytes hashing to
// prefixHash.
func (s *Sealer) appendRecord(b []byte, index uint64, prefixHash, plaintext []byte) []byte {
	ad := recordAssociatedData(index, prefixHash)
	nonce := s.nonce(ad, plaintext)
	b = detcbor.AppendHead(b, detcbor.MajorBytes, uint64(len(plaintext)+sealOverhead))
	return s.box.SealWithNonce(b, nonce, plaintext, ad)
}

// nonce is a record's synthetic nonce.
func (s *Sealer) nonce(ad, plaintext []byte) []byte {
	m := hmac.New(sha256.New, s.nonceKey)
	m.Write(ad)
	m.Write(plaintext)
	return m.Sum(nil)[:seal.NonceSize]
}

// Open checks and decrypts a sealed snapshot and returns the plain journal
// (what an unsealed snapshot of the same execution holds) and its number of
// records. It fails with a *FormatError on anything but the exact bytes a
// Sealer with this key wrote.
func (s *Sealer) Open(b []byte) (plain []byte, records uint64, err error) {
	r := detcbor.NewReader(b)
	fail := func(at int, err error) ([]byte, uint64, error) {
		return nil, 0, &FormatError{Offset: at, Err: err}
	}
	if r.Array(3) != nil {
		return fail(0, ErrSealedFormat)
	}
	if magic, err := r.Text(); err != nil || magic != SealMagic {
		return fail(1, ErrSealedFormat)
	}
	at := r.Offset()
	if v, err := r.Uint(); err != nil {
		return fail(at, ErrSealedFormat)
	} else if v != SealVersion {
		return fail(at, fmt.Errorf("%w: version %d (this sidecar reads version %d)", ErrSealedFormat, v, SealVersion))
	}
	at = r.Offset()
	id, err := r.Raw(detcbor.MajorBytes)
	if err != nil || len(id) != keyIDBytes {
		return fail(at, ErrSealedFormat)
	}
	if subtle.ConstantTimeCompare(id, s.keyID[:]) != 1 {
		return fail(at, ErrSealKey)
	}
	h := sha256.New()
	hashed := 0
	plain = make([]byte, 0, len(b))
	for r.Len() > 0 {
		at = r.Offset()
		rec, err := r.Raw(detcbor.MajorBytes)
		if err != nil || len(rec) < sealOverhead {
			return fail(at, ErrSealedFormat)
		}
		h.Write(b[hashed:at])
		hashed = at
		ad := recordAssociatedData(records, h.Sum(nil))
		nonce := rec[:seal.NonceSize]
		start := len(plain)
		if plain, err = s.box.Open(plain, rec, ad); err != nil {
			return fail(at, ErrSealedRecord)
		}
		// Only the synthetic nonce is accepted: a record has exactly one
		// form, so equal contents give equal bytes.
		if !hmac.Equal(s.nonce(ad, plain[start:]), nonce) {
			return fail(at, ErrSealedRecord)
		}
		records++
	}
	if records == 0 {
		return fail(len(b), ErrSealedFormat)
	}
	return plain, records, nil
}

// Load decodes snapshot bytes for a resume, opening them first with seal
// when they are sealed. A sealed snapshot needs its seal key, and a seal
// key is refused for a snapshot that is not sealed: a host that asked for
// sealing must not silently resume plain bytes.
//
// Unlike Decode, Load leaves the journal's answers encoded, checked as
// Decode checks them, for the replay to import one at a time from their
// bytes (Outcome.Encoded), and each call's arguments as their bytes, for
// the replay to compare with the arguments it makes (HostCall.SameArgs;
// HostCall.Decoded builds them). Those encodings may share raw's memory,
// which must not change while the snapshot is in use.
func Load(raw []byte, seal *Sealer) (*Snapshot, error) {
	sealed := IsSealed(raw)
	switch {
	case sealed && seal == nil:
		return nil, ErrSealedNeedsKey
	case !sealed && seal != nil:
		return nil, ErrNotSealed
	case !sealed:
		return decode(raw, true)
	}
	plain, records, err := seal.Open(raw)
	if err != nil {
		return nil, err
	}
	s, err := decode(plain, true)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			// Offsets inside the plain journal mean nothing in the sealed
			// bytes: say which journal byte failed.
			return nil, &FormatError{Offset: fe.Offset, Err: fmt.Errorf("%w (in the sealed journal)", fe.Err)}
		}
		return nil, err
	}
	s.records = records
	s.plainHead = append([]byte(nil), plain[:s.head]...)
	return s, nil
}
