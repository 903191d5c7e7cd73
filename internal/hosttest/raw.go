package hosttest

import (
	"encoding/binary"
	"io"
)

// RecvRaw reads one response without decoding it: the binary header and
// payload, or the JSONL line (without its newline) and a nil payload.
// Benchmarks use it so that host-side JSON decoding is not counted as
// sidecar latency.
func (s *Sidecar) RecvRaw() (header, payload []byte, err error) {
	if s.JSONL {
		line, err := s.stdout.ReadBytes('\n')
		if err != nil {
			return nil, nil, err
		}
		return line[:len(line)-1], nil, nil
	}
	var prefix [8]byte
	if _, err := io.ReadFull(s.stdout, prefix[:]); err != nil {
		return nil, nil, err
	}
	hl, pl := binary.LittleEndian.Uint32(prefix[:4]), binary.LittleEndian.Uint32(prefix[4:])
	buf := make([]byte, int(hl)+int(pl))
	if _, err := io.ReadFull(s.stdout, buf); err != nil {
		return nil, nil, err
	}
	return buf[:hl], buf[hl:], nil
}
