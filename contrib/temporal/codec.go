package mustardtemporal

import (
	"crypto/subtle"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/mustard-sidecar/mustard-sidecar/internal/seal"
)

// MinCodecKeyBytes is the shortest key NewCodec accepts.
const MinCodecKeyBytes = 32

// Encoding is the metadata "encoding" of a payload the Codec encrypted.
const Encoding = "binary/mustard-encrypted"

const (
	metaKeyID   = "mustard-key-id"
	codecAD     = "mustard-temporal-payload v1"
	codecInfo   = "mustard-sidecar temporal codec v1 "
	keyIDLength = 8
)

// Codec is a converter.PayloadCodec that encrypts every payload Temporal
// stores: workflow inputs and results, activity arguments and results
// (the capability calls' arguments and answers among them), update
// arguments and query results. History then holds ciphertext only; the
// workers, and clients configured with the same codec, see plain values.
//
// Keys follow the discipline of sealed snapshots: the host's key is never
// used directly; HKDF-SHA256 derives one key per purpose from it (an
// XChaCha20-Poly1305 key and a key id), so the codec key can be the seal
// key without the two uses ever sharing a derived key. Each payload gets
// a random 192-bit nonce (payloads need no determinism: Temporal records
// a payload once and replays the recorded bytes). The key id travels in
// the payload's metadata so that a payload under another key is refused
// with a clear error rather than failing authentication obscurely. The
// box is the envelope sealed snapshots and checkpoints use too.
//
// Payloads without the codec's encoding pass through Decode unchanged,
// so that history written before the codec was turned on stays readable.
type Codec struct {
	box   *seal.Box
	keyID []byte
	ad    []byte
}

var _ converter.PayloadCodec = (*Codec)(nil)

// NewCodec derives the codec's keys from key, which must be at least
// MinCodecKeyBytes long.
func NewCodec(key []byte) (*Codec, error) {
	if len(key) < MinCodecKeyBytes {
		return nil, fmt.Errorf("codec key must be at least %d bytes, got %d", MinCodecKeyBytes, len(key))
	}
	box, err := seal.New(key, codecInfo+"encryption")
	if err != nil {
		return nil, err
	}
	id := seal.Derive(key, codecInfo+"key id", keyIDLength)
	return &Codec{box: box, keyID: id, ad: append([]byte(codecAD), id...)}, nil
}

// DataConverter returns Temporal's default data converter with the codec
// applied: give it to client.Options.DataConverter on every client and
// worker of the executions.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// Encode encrypts each payload whole (metadata and data).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encrypting a payload: %w", err)
		}
		data, err := c.box.Seal(make([]byte, 0, len(plain)+seal.Overhead), plain, c.ad)
		if err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				metaKeyID:                  append([]byte(nil), c.keyID...),
			},
			Data: data,
		}
	}
	return out, nil
}

// ErrCodecKey is returned by Decode for a payload encrypted under another
// key.
var ErrCodecKey = errors.New("payload was encrypted under another codec key")

// Decode decrypts the payloads Encode made and passes others through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		if subtle.ConstantTimeCompare(p.GetMetadata()[metaKeyID], c.keyID) != 1 {
			return nil, ErrCodecKey
		}
		data := p.GetData()
		if len(data) < seal.Overhead {
			return nil, errors.New("encrypted payload is truncated")
		}
		plain, err := c.box.Open(nil, data, c.ad)
		if err != nil {
			return nil, errors.New("encrypted payload failed authentication")
		}
		var q commonpb.Payload
		if err := proto.Unmarshal(plain, &q); err != nil {
			return nil, errors.New("encrypted payload holds no payload")
		}
		out[i] = &q
	}
	return out, nil
}
