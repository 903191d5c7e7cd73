package host

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
)

// Values past 1 MiB: a request too large for the sidecar's request limit
// sends its largest values through stages first (the stage and
// stage_values extensions): snapshot bytes, program bytes, the source,
// the inputs, answers. The caller sees one call.

// stagePart is a value of a request that can travel in a stage instead.
type stagePart struct {
	inline int    // at most this many bytes of the request are the value inline
	bytes  []byte // what the stage holds instead
}

// jsonPart is a JSON value as a stagePart: inline it is the JSON text
// after its key.
func jsonPart(b []byte) stagePart { return stagePart{inline: len(b) + 64, bytes: b} }

// rawPart is a request's raw bytes as a stagePart: the binary payload, or
// base64 in a JSONL field.
func (c *Client) rawPart(b []byte) stagePart {
	n := len(b)
	if c.jsonl {
		n = base64.StdEncoding.EncodedLen(n)
	}
	return stagePart{inline: n + 64, bytes: b}
}

// requestBuilder makes a request in which parts[i] travels in stage
// ids[i], or inline where ids[i] is "". It is called more than once.
type requestBuilder func(ids []string) (*request, []byte, rawField)

// send sends the request build makes, with every part inline if it fits
// the request limit, else with the largest parts staged first, as few as
// make it fit. ErrRequestTooLarge, with nothing sent, means it cannot fit
// even with every part staged, or the sidecar could not hold the stages.
func (c *Client) send(ctx context.Context, parts []stagePart, build requestBuilder, cancellable bool) (*response, message, error) {
	ids := make([]string, len(parts))
	total := 0
	for _, p := range parts {
		total += p.inline
	}
	if total <= maxRequestBytes {
		req, raw, field := build(ids)
		resp, m, err := c.roundTrip(ctx, req, raw, field, cancellable)
		if !errors.Is(err, ErrRequestTooLarge) || len(parts) == 0 {
			return resp, m, err
		}
	}
	if len(parts) == 0 {
		req, raw, field := build(ids)
		return c.roundTrip(ctx, req, raw, field, cancellable)
	}
	// The request with every part staged: it must fit.
	for i := range ids {
		ids[i] = c.stages.get()
	}
	defer func() { c.stages.put(ids...) }()
	probe, raw, field := build(ids)
	probe.ProtocolVersion, probe.ID = protocolVersion, math.MaxUint64
	frame, err := encodeRequest(probe, raw, field, c.jsonl)
	if err != nil {
		return nil, message{}, err
	}
	// Keep the smallest parts inline while they fit.
	room := maxRequestBytes - len(frame)
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return parts[a].inline - parts[b].inline })
	staged := slices.Clone(ids)
	for _, i := range order {
		if parts[i].inline > room {
			break
		}
		room -= parts[i].inline
		staged[i] = ""
	}
	// Stage the others, then send the request that names them.
	var used []string
	for i, id := range staged {
		if id == "" {
			continue
		}
		used = append(used, id)
		if err := c.Stage(ctx, id, parts[i].bytes); err != nil {
			c.dropStages(ctx, used)
			if errors.Is(err, ErrStageTooLarge) {
				return nil, message{}, fmt.Errorf("%w: staging %d bytes: %w", ErrRequestTooLarge, len(parts[i].bytes), err)
			}
			return nil, message{}, err
		}
	}
	req, raw, field := build(staged)
	resp, m, err := c.roundTrip(ctx, req, raw, field, cancellable)
	if resp == nil {
		// Not answered: the stages may still hold their bytes.
		c.dropStages(ctx, used)
	}
	return resp, m, err
}

// dropStages empties stages a request did not consume (it failed to be
// sent or answered), so they hold none of the sidecar's stage bound. Best
// effort: a process that is gone took its stages with it.
func (c *Client) dropStages(ctx context.Context, ids []string) {
	ctx = context.WithoutCancel(ctx)
	for _, id := range ids {
		zero := uint64(0)
		if _, _, err := c.roundTrip(ctx, &request{Method: "stage", StageID: id, Offset: &zero}, nil, rawChunk, false); err != nil {
			return
		}
	}
}

// stageIDs hands out stage ids, reusing those given back: a stage left
// behind (its request never sent) is restarted, so emptied, by the next
// upload under its id.
type stageIDs struct {
	mu   sync.Mutex
	next uint64
	free []string
}

func (s *stageIDs) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		return id
	}
	s.next++
	return "host-" + strconv.FormatUint(s.next, 10)
}

func (s *stageIDs) put(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			s.free = append(s.free, id)
		}
	}
}
