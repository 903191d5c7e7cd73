package mustardtemporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// ErrBlobNotFound is wrapped by BlobStore.Get for a key the store does
// not hold.
var ErrBlobNotFound = errors.New("blob not found")

// BlobStore keeps the bytes that must not go into Temporal's history:
// snapshots (which only grow, and pass Temporal's payload limit) and
// compiled programs. Keys are set by this package ("snapshots/<id>",
// "programs/<id>", where id is the hex SHA-256 of the bytes), so a value
// under a key never changes and a Put may be repeated. Implementations
// must be safe for concurrent use.
type BlobStore interface {
	// Put stores b under key, replacing what was there.
	Put(ctx context.Context, key string, b []byte) error
	// Get returns the bytes under key, or an error wrapping
	// ErrBlobNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// BucketStore is a BlobStore on a gocloud.dev blob.Bucket: memory and
// local directories (memblob, fileblob), S3, GCS and Azure Blob Storage,
// chosen by URL. Import the driver the URL needs, for example
//
//	import _ "gocloud.dev/blob/s3blob"
//	store, err := mustardtemporal.OpenBucket(ctx, "s3://my-bucket?region=eu-west-1&prefix=mustard/")
type BucketStore struct {
	bucket *blob.Bucket
}

// NewBucketStore returns a BlobStore on b. Closing the store closes b.
func NewBucketStore(b *blob.Bucket) *BucketStore { return &BucketStore{bucket: b} }

// OpenBucket opens the bucket at url (mem://, file:///path, s3://...,
// gs://..., azblob://...; a prefix=... parameter keeps the keys under a
// folder) with the drivers the program imports.
func OpenBucket(ctx context.Context, url string) (*BucketStore, error) {
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("opening blob store: %w", err)
	}
	return NewBucketStore(b), nil
}

func (s *BucketStore) Put(ctx context.Context, key string, b []byte) error {
	if err := s.bucket.WriteAll(ctx, key, b, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return fmt.Errorf("blob store: writing %s: %w", key, err)
	}
	return nil
}

func (s *BucketStore) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.bucket.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("blob store: %s: %w", key, ErrBlobNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob store: reading %s: %w", key, err)
	}
	return b, nil
}

func (s *BucketStore) Delete(ctx context.Context, key string) error {
	err := s.bucket.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("blob store: deleting %s: %w", key, err)
	}
	return nil
}

// Close closes the bucket.
func (s *BucketStore) Close() error { return s.bucket.Close() }

// SnapshotKey and ProgramKey are the keys snapshots and compiled programs
// are stored under.
func SnapshotKey(id string) string { return "snapshots/" + id }
func ProgramKey(id string) string  { return "programs/" + id }

// getVerified reads key and checks that its bytes hash to id, so that a
// store that lost or mixed up bytes is caught before the sidecar sees
// them.
func getVerified(ctx context.Context, s BlobStore, key, id string) ([]byte, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if sha256Hex(b) != id {
		return nil, fmt.Errorf("blob store: %s does not hold the bytes of %s", key, id)
	}
	return b, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
