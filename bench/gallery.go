package bench

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// GalleryGroup marks workloads recorded from the reference's gallery.
const GalleryGroup = "gallery"

// RecordGallery turns a local checkout of the reference implementation's
// tool-calling gallery (its examples/programmatic-tool-calls directory:
// subdirectories, each with a catalog of programs, inputs and tools) into
// workloads. The peer runs every program in Node with the catalog's tools
// and records each call with its arguments and answer, and the result;
// then each is run in process through Sessions in one mode and in batch
// mode, hot and cold (checkInSession), and one that does not make the same
// calls or give the same result here is left out. The skipped list says
// why for each program left out; Workload.Checked holds the round trips of
// each mode and whether the calls came in the reference's order. Nothing
// is written to disk: the programs and traces live only in this process.
func RecordGallery(cfg Config, dir string) (ws []*Workload, skipped []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	p, reason := spawnPeer(cfg)
	if p == nil {
		return nil, nil, fmt.Errorf("recording the gallery needs the peer: %s", reason)
	}
	defer p.close()
	var reply struct {
		Workloads []*Workload `json:"workloads"`
		Skipped   []struct {
			Name   string `json:"name"`
			Reason string `json:"reason"`
		} `json:"skipped"`
	}
	if err := p.exchange(map[string]any{"cmd": "record", "dir": abs}, &reply, 5*time.Minute); err != nil {
		return nil, nil, err
	}
	for _, s := range reply.Skipped {
		skipped = append(skipped, fmt.Sprintf("%s: reference: %s", s.Name, s.Reason))
	}
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	for _, w := range reply.Workloads {
		name := w.Name
		w.Name, w.Group = GalleryGroup+"/"+name, GalleryGroup
		if err := w.prepare(); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: fixture: %v", name, err))
			continue
		}
		x, err := w.checkInSession(s)
		if err != nil {
			// The first line: a guest error's traceback follows it.
			msg, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), w.Name+" "), "\n")
			skipped = append(skipped, fmt.Sprintf("%s: ours: %s", name, msg))
			continue
		}
		w.Checked = &x
		ws = append(ws, w)
	}
	if len(ws) == 0 && len(skipped) == 0 {
		return nil, nil, fmt.Errorf("no gallery programs under %s (expected subdirectories with catalog.js or catalog.ts)", abs)
	}
	return ws, skipped, nil
}

// checkInSession compiles w in s and runs it in one mode and in batch
// mode, each hot through s and cold with every resume in a new Session
// (as in a new process), checking each run against the fixture
// (verifyModes).
func (w *Workload) checkInSession(s *protocol.Session) (Crossing, error) {
	c := sessionConn{s}
	r, _, err := c.call(compileRequest(1, w.Source), nil)
	if err != nil {
		return Crossing{}, fmt.Errorf("%s (compile): %w", w.Name, err)
	}
	return w.verifyModes(c, freshSession, r.Result.ProgramID, true)
}
