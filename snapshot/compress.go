package snapshot

import (
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// Large host answers are journaled compressed, record by record, so that a
// snapshot stays a prefix of the next one and grows with the compressed
// size of what the execution received: a value whose encoding is at least
// compressMin bytes and shrinks under zstd is written as
//
//	[4, size: uint, zstd: bytes]   (the value's CBOR, compressed)
//
// instead of [2, value]. The encoder's settings are fixed, so the bytes are
// deterministic for a given build, and snapshot ids with them. The decoder
// accepts any zstd frame that holds exactly the claimed size of one value's
// canonical encoding, and plain records of any size: a snapshot written by
// one build (another version of the compressor, other settings) resumes in
// every other. Replay never re-encodes a record, so the bytes a resume
// appends do not depend on how older records were compressed.
//
// Compressing is most of a large answer's round trip, and it stays on one
// CPU: cutting a 50 KB record into two frames compressed side by side
// took twice as long as one frame on a 2-vCPU VM, where waking the other
// vCPU costs more than the half it would take (bench/README.md).
const (
	tagCompressedValue = 4
	compressMin        = 1 << 10

	// MaxRecordBytes bounds one decompressed record: a record that claims
	// more, or decompresses to other than it claims, fails closed before
	// its memory is taken (a decompression bomb in authenticated bytes).
	MaxRecordBytes = 64 << 20
)

var (
	zstdEncoder, _ = zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedFastest), // as small as SpeedDefault on tool results, faster (BenchmarkCompressAnswer)
		zstd.WithEncoderCRC(false),
		zstd.WithSingleSegment(true),
		zstd.WithZeroFrames(true))
	// The decoder serves as many DecodeAll calls at once as there are
	// CPUs: the records of one journal (inflate.go), and the sessions a
	// process serves side by side.
	zstdDecoder, _ = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(MaxRecordBytes),
		zstd.WithDecodeAllCapLimit(true))
)

// compressed appends the compressed form of an encoded value to dst and
// reports whether it is smaller than the value; when it is not, the value
// is written plain and what was appended is to be ignored.
func compressed(dst, enc []byte) ([]byte, bool) {
	if len(enc) < compressMin {
		return dst, false
	}
	start := len(dst)
	dst = zstdEncoder.EncodeAll(enc, dst)
	return dst, len(dst)-start < len(enc)
}

// decompress returns the size bytes z claims to hold, or false.
func decompress(z []byte, size uint64) ([]byte, bool) {
	if size < compressMin || size > MaxRecordBytes {
		return nil, false
	}
	out, err := zstdDecoder.DecodeAll(z, make([]byte, 0, size))
	if err != nil || uint64(len(out)) != size {
		return nil, false
	}
	return out, true
}
