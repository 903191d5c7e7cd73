// Package seal is the one sealing envelope of mustard-sidecar: sealed
// snapshots (package snapshot), sealed checkpoints (package host/durable)
// and the Temporal payload codec (contrib/temporal) seal bytes with it.
//
// Keys are never used directly: Derive makes one key per purpose from a
// host's key with HKDF-SHA256, under an info string naming the use and
// the purpose ("mustard-sidecar seal v1 encryption"), so one host key can
// serve every use without two uses sharing a derived key. A sealed box is
// nonce(24) || XChaCha20-Poly1305 ciphertext and tag, with associated data
// the caller binds it to.
package seal

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"

	"golang.org/x/crypto/chacha20poly1305"
)

const (
	// NonceSize is the length of a box's nonce, which it starts with.
	NonceSize = chacha20poly1305.NonceSizeX
	// Overhead is how much longer a box is than what it seals.
	Overhead = NonceSize + chacha20poly1305.Overhead
)

// ErrOpen is returned by Open for a box that is truncated, altered, bound
// to other associated data or sealed under another key.
var ErrOpen = errors.New("sealed box failed authentication")

// Derive is the n-byte key for info (use and purpose) derived from key.
func Derive(key []byte, info string, n int) []byte {
	k, err := hkdf.Key(sha256.New, key, nil, info, n)
	if err != nil {
		panic(err) // n is far below HKDF-SHA256's bound
	}
	return k
}

// Box seals and opens byte strings under one derived key.
type Box struct {
	aead cipher.AEAD
}

// New is the Box whose key is derived from key for info (Derive).
func New(key []byte, info string) (*Box, error) {
	aead, err := chacha20poly1305.NewX(Derive(key, info, chacha20poly1305.KeySize))
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal appends to dst the box of plaintext bound to ad, with a random
// nonce.
func (b *Box) Seal(dst, plaintext, ad []byte) ([]byte, error) {
	var nonce [NonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	return b.SealWithNonce(dst, nonce[:], plaintext, ad), nil
}

// SealWithNonce appends to dst the box of plaintext bound to ad with the
// given nonce, which must never seal another plaintext under the same key
// and ad (a synthetic nonce derived from both, for deterministic boxes).
func (b *Box) SealWithNonce(dst, nonce, plaintext, ad []byte) []byte {
	dst = append(dst, nonce...)
	return b.aead.Seal(dst, nonce, plaintext, ad)
}

// Open appends to dst the plaintext of box, which must be bound to ad.
func (b *Box) Open(dst, box, ad []byte) ([]byte, error) {
	if len(box) < Overhead {
		return nil, ErrOpen
	}
	out, err := b.aead.Open(dst, box[:NonceSize], box[NonceSize:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}
