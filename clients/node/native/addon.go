// Command native is the Node package's in-process engine: the sidecar's
// protocol sessions in a shared library Node loads as an addon
// (mustard-sidecar.node), so that a request is a function call rather
// than a round trip through two pipes and two processes' wake-ups.
//
// Build it with (the package's `npm run build:native` does)
//
//	go build -buildmode=c-shared -o mustard-sidecar.node ./clients/node/native
//
// The package's lib/inprocess.js loads it when a host chooses the
// in-process engine. A session here is what a sidecar process serves
// (protocol.Session): the same requests, limits, errors and snapshots,
// framed the same way, configured by the same arguments; the process
// boundary is what goes (the package README, "The in-process engine").
// addon.c is the Node-API side.
package main

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/gcpace"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

func main() {}

// session is one protocol session and the response its last request left
// for the caller to take (pending, whose frame is n bytes). A session
// belongs to one JavaScript thread; the mutex keeps a misuse from another
// from corrupting it.
type session struct {
	owner   uint64 // the module instance that opened it
	mu      sync.Mutex
	s       *protocol.Session
	pending protocol.Response
	n       int
	ended   bool
}

var (
	mu       sync.Mutex
	sessions = map[uint64]*session{}
	lastID   uint64
	owners   uint64 // module instances so far
	memLimit int64  // the soft memory limit set so far, 0 if none
)

func init() {
	// As the sidecar command has it (internal/cli), unless GOGC says.
	if os.Getenv("GOGC") == "" {
		gcpace.Start()
	}
}

// cError is an error's text in C memory, for the caller to throw and
// free.
func cError(err error) *C.char { return C.CString(err.Error()) }

// mustardOpen starts a session configured by the sidecar command's
// arguments (a JSON array of strings). It returns an error's text, or
// NULL with the session's id in *id.
//
//export mustardOpen
func mustardOpen(owner C.uint64_t, args *C.char, n C.size_t, id *C.uint64_t) *C.char {
	var argv []string
	if err := json.Unmarshal(C.GoBytes(unsafe.Pointer(args), C.int(n)), &argv); err != nil {
		return cError(errors.New("the arguments must be an array of strings"))
	}
	opts, err := cli.SessionOptions(argv)
	if err != nil {
		return cError(err)
	}
	s := protocol.NewSession(opts)
	s.Warm()
	mu.Lock()
	defer mu.Unlock()
	if limit := cli.SoftMemoryLimit(opts); limit > memLimit && os.Getenv("GOMEMLIMIT") == "" {
		// One runtime serves every session: the limit is the largest
		// any of them needs.
		memLimit = limit
		debug.SetMemoryLimit(limit)
	}
	lastID++
	sessions[lastID] = &session{s: s, owner: uint64(owner)}
	*id = C.uint64_t(lastID)
	return nil
}

func lookup(id C.uint64_t) *session {
	mu.Lock()
	defer mu.Unlock()
	return sessions[uint64(id)]
}

// mustardNewOwner names a module instance (one per thread that loads
// the addon), for mustardCloseOwner.
//
//export mustardNewOwner
func mustardNewOwner() C.uint64_t {
	mu.Lock()
	defer mu.Unlock()
	owners++
	return C.uint64_t(owners)
}

// mustardClose ends a session and every execution it holds.
//
//export mustardClose
func mustardClose(id C.uint64_t) {
	mu.Lock()
	ss := sessions[uint64(id)]
	delete(sessions, uint64(id))
	mu.Unlock()
	if ss != nil {
		ss.close()
	}
}

// mustardCloseOwner closes every session a module instance opened: Node
// calls it when it tears the instance down (a worker thread that exits).
//
//export mustardCloseOwner
func mustardCloseOwner(owner C.uint64_t) {
	var closing []*session
	mu.Lock()
	for id, ss := range sessions {
		if ss.owner == uint64(owner) {
			closing = append(closing, ss)
			delete(sessions, id)
		}
	}
	mu.Unlock()
	for _, ss := range closing {
		ss.close()
	}
}

// mustardSessions counts the open sessions, of every module instance.
//
//export mustardSessions
func mustardSessions() C.uint64_t {
	mu.Lock()
	defer mu.Unlock()
	return C.uint64_t(len(sessions))
}

func (ss *session) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.end()
}

func (ss *session) end() {
	if !ss.ended {
		ss.ended = true
		ss.pending = protocol.Response{}
		ss.s.Close()
	}
}

var errClosed = errors.New("the in-process session is closed")

// mustardHandle serves one request frame and leaves its response frame
// pending, *n bytes, for mustardTake. It returns an error's text if the
// session has ended: closed, or by this request (one the contract makes
// fatal, which ends a sidecar process alike).
//
//export mustardHandle
func mustardHandle(id C.uint64_t, data unsafe.Pointer, length C.size_t, n *C.size_t) *C.char {
	ss := lookup(id)
	if ss == nil {
		return cError(errClosed)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return cError(errClosed)
	}
	resp, err := serve(ss.s, unsafe.Slice((*byte)(data), int(length)))
	if err != nil {
		ss.end()
		return cError(err)
	}
	ss.pending = resp
	ss.n = frame.Size(resp.Header, resp.Payload)
	*n = C.size_t(ss.n)
	return nil
}

// serve reads one frame as the sidecar reads its stdin (the same size
// limit and framing errors, fatal alike) and serves it. in is the
// caller's memory, valid during this call only: the frame reader copies
// the request into a buffer of its own, which the session may keep.
func serve(s *protocol.Session, in []byte) (protocol.Response, error) {
	f, err := frame.NewBinaryReader(bytes.NewReader(in)).Next()
	if err != nil {
		return protocol.Response{}, err
	}
	if frame.Size(f.Header, f.Payload) != len(in) {
		return protocol.Response{}, errors.New("the request has bytes after its frame")
	}
	return s.Handle(f.Header, f.Payload)
}

// mustardTake writes the pending response's frame into dst (n bytes, as
// mustardHandle said) and lets it go.
//
//export mustardTake
func mustardTake(id C.uint64_t, dst unsafe.Pointer, n C.size_t) {
	if ss := lookup(id); ss != nil {
		ss.mu.Lock()
		if int(n) == ss.n {
			frame.Append(unsafe.Slice((*byte)(dst), ss.n)[:0], ss.pending.Header, ss.pending.Payload)
		}
		ss.pending = protocol.Response{}
		ss.mu.Unlock()
	}
}

// mustardDrop lets the pending response go uncopied.
//
//export mustardDrop
func mustardDrop(id C.uint64_t) {
	if ss := lookup(id); ss != nil {
		ss.mu.Lock()
		ss.pending = protocol.Response{}
		ss.mu.Unlock()
	}
}
