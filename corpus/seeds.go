package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// SeedPrefix starts the name of every generated seed file; other files in
// a seed directory (crashers found by fuzzing, hand-written seeds) are left
// alone.
const SeedPrefix = "transcript_"

// Seed dirs, relative to the module root.
const (
	SessionSeeds   = "protocol/testdata/fuzz/FuzzSession"
	ProgramSeeds   = "engine/testdata/fuzz/FuzzLoadProgram"
	SnapshotSeeds  = "snapshot/testdata/fuzz/FuzzDecode"
	SealedSeeds    = "snapshot/testdata/fuzz/FuzzOpen"
	JSONValueSeeds = "value/testdata/fuzz/FuzzParseJSON"
	CBORValueSeeds = "value/testdata/fuzz/FuzzDecodeCBOR"
	LineSeeds      = "frame/testdata/fuzz/FuzzLineReader"
	FrameSeeds     = "frame/testdata/fuzz/FuzzBinaryReader"
)

var seedDirs = []string{SessionSeeds, ProgramSeeds, SnapshotSeeds, SealedSeeds, JSONValueSeeds, CBORValueSeeds, LineSeeds, FrameSeeds}

// seedSet collects seed files, dropping repeated inputs.
type seedSet struct {
	files map[string][]byte // path relative to the module root -> content
	seen  map[string]bool   // dir + input hash
}

func (s *seedSet) add(dir, name string, args ...any) {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case bool:
			fmt.Fprintf(&b, "bool(%t)\n", v)
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
		default:
			panic(fmt.Sprintf("corpus: seed argument %T", a))
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	key := dir + string(sum[:])
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	s.files[filepath.Join(dir, SeedPrefix+name)] = []byte(b.String())
}

// Seeds derives the fuzz seed files from transcripts: path relative to the
// module root -> file content.
func Seeds(ts []*Transcript) (map[string][]byte, error) {
	s := &seedSet{files: map[string][]byte{}, seen: map[string]bool{}}
	var programs, snapshots, sealed [][]byte
	var programNames, snapshotNames, sealedNames []string
	for _, t := range ts {
		variants := []*Transcript{t}
		if t.ReplayBinary {
			bt, err := t.Binary()
			if err != nil {
				return nil, err
			}
			variants = append(variants, bt)
		}
		for _, v := range variants {
			binary := v.Transport == "binary"
			for pi, p := range v.Processes {
				stream := v.Stream(p)
				name := fmt.Sprintf("%s_%d_%s", t.Name, pi+1, v.Transport)
				groups := requestGroups(p)
				if len(groups) == 1 || !exhaustsLimits(p) {
					s.add(SessionSeeds, name, binary, stream)
				}
				if len(groups) > 1 {
					for gi, g := range groups {
						s.add(SessionSeeds, fmt.Sprintf("%s_g%d", name, gi+1), binary, v.Stream(Process{Steps: g}))
					}
				}
				if binary {
					s.add(FrameSeeds, name, stream)
				} else {
					s.add(LineSeeds, name, stream)
				}
			}
		}
		// Bytes and values: from the JSONL form, where they are fields.
		for pi, p := range t.Processes {
			for si, st := range p.Steps {
				if st.Text {
					continue
				}
				tag := fmt.Sprintf("%s_%d_%d", t.Name, pi+1, si+1)
				for _, raw := range [][]byte{st.SendPayload, st.ExpectPayload} {
					if snapshot.IsSealed(raw) {
						sealed, sealedNames = append(sealed, raw), append(sealedNames, tag)
					} else if isSnapshot(raw) {
						snapshots, snapshotNames = append(snapshots, raw), append(snapshotNames, tag)
					} else if isProgram(raw) {
						programs, programNames = append(programs, raw), append(programNames, tag)
					}
				}
				for _, msg := range [][]byte{st.Send, st.Expect} {
					var doc any
					if json.Unmarshal(msg, &doc) != nil {
						continue
					}
					for _, f := range []string{"program_base64", "snapshot_base64"} {
						for _, b := range base64Fields(doc, f) {
							if f == "snapshot_base64" && snapshot.IsSealed(b) {
								sealed, sealedNames = append(sealed, b), append(sealedNames, tag)
							} else if f == "snapshot_base64" && isSnapshot(b) {
								snapshots, snapshotNames = append(snapshots, b), append(snapshotNames, tag)
							} else if f == "program_base64" && isProgram(b) {
								programs, programNames = append(programs, b), append(programNames, tag)
							}
						}
					}
				}
				for i, v := range structuredValues(st.Send, st.Expect) {
					name := fmt.Sprintf("%s_%d", tag, i+1)
					if _, err := value.ParseJSON(v); err != nil {
						name += "_invalid"
					}
					s.add(JSONValueSeeds, name, v)
				}
			}
		}
	}
	for i, b := range programs {
		s.add(ProgramSeeds, programNames[i], b)
	}
	if len(programs) > 0 {
		for name, b := range corruptions(programs[0]) {
			s.add(ProgramSeeds, "corrupt_"+name, b)
		}
	}
	for i, b := range sealed {
		s.add(SealedSeeds, sealedNames[i], b)
	}
	if len(sealed) > 0 {
		for name, b := range corruptions(sealed[len(sealed)-1]) {
			s.add(SealedSeeds, "corrupt_"+name, b)
		}
	}
	for i, b := range snapshots {
		s.add(SnapshotSeeds, snapshotNames[i], b)
		snap, err := snapshot.Decode(b)
		if err != nil {
			continue
		}
		s.add(CBORValueSeeds, snapshotNames[i]+"_inputs", value.Object(snap.Header.Inputs...).AppendCBOR(nil))
		s.add(CBORValueSeeds, snapshotNames[i]+"_args", value.Array(snap.FocusCall().Args...).AppendCBOR(nil))
	}
	// Corrupt the longest snapshot: it has a journal of completed calls.
	if len(snapshots) > 0 {
		longest := snapshots[0]
		for _, b := range snapshots {
			if len(b) > len(longest) {
				longest = b
			}
		}
		for name, b := range corruptions(longest) {
			s.add(SnapshotSeeds, "corrupt_"+name, b)
		}
	}
	return s.files, nil
}

// hexID matches program, snapshot and policy ids (and tokens, digests).
var hexID = regexp.MustCompile(`[0-9a-f]{64}`)

// requestGroups splits a process's requests into the smallest groups that
// stand alone: a request joins the group of every earlier request whose
// response produced an id it uses. Small seeds fuzz much faster than whole
// sessions.
func requestGroups(p Process) [][]Step {
	n := len(p.Steps)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	producer := map[string]int{}
	for i, st := range p.Steps {
		if st.Text {
			// Raw input ends or decorates a session: keep it whole.
			return [][]Step{p.Steps}
		}
		for _, id := range hexID.FindAllString(string(st.Send), -1) {
			if j, ok := producer[id]; ok {
				parent[find(i)] = find(j)
			}
		}
		for _, id := range hexID.FindAllString(string(st.Expect), -1) {
			if _, ok := producer[id]; !ok && !strings.Contains(string(st.Send), id) {
				producer[id] = i
			}
		}
	}
	var groups [][]Step
	index := map[int]int{}
	for i, st := range p.Steps {
		root := find(i)
		gi, ok := index[root]
		if !ok {
			gi = len(groups)
			index[root] = gi
			groups = append(groups, nil)
		}
		groups[gi] = append(groups[gi], st)
	}
	return groups
}

// exhaustsLimits reports whether a process runs guests into their limits:
// slow to execute, so only its groups become seeds.
func exhaustsLimits(p Process) bool {
	for _, st := range p.Steps {
		if bytes.Contains(st.Expect, []byte(`"error":"Limit: `)) {
			return true
		}
	}
	return false
}

func isSnapshot(b []byte) bool {
	return bytes.Contains(b[:min(len(b), 24)], []byte(snapshot.Magic))
}

func isProgram(b []byte) bool {
	return bytes.Contains(b[:min(len(b), 24)], []byte("mustard-program"))
}

// corruptions are forged variants of valid bytes: cut, flipped, extended.
func corruptions(b []byte) map[string][]byte {
	out := map[string][]byte{
		"empty":          {},
		"first_byte":     b[:1],
		"half":           b[:len(b)/2],
		"minus_one":      b[:len(b)-1],
		"plus_zero":      append(bytes.Clone(b), 0),
		"plus_copy":      append(bytes.Clone(b), b...),
		"indefinite":     append([]byte{0x9f}, b[1:]...),
		"version_two":    bytes.Replace(bytes.Clone(b), []byte("\x01"), []byte("\x02"), 1),
		"last_bit":       flip(b, len(b)-1),
		"middle_bit":     flip(b, len(b)/2),
		"header_bit":     flip(b, 3),
		"all_ff":         bytes.Repeat([]byte{0xff}, len(b)),
		"huge_length":    append(bytes.Clone(b[:1]), 0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
		"nested_arrays":  bytes.Repeat([]byte{0x81}, 10000),
		"text_not_utf_8": append(append([]byte{0x83, 0x6f}, []byte("mustard-progra")...), 0xff, 0x01, 0x61, 0xff),
	}
	return out
}

func b64dec(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}

// base64Fields returns the decoded bytes of every string member named key,
// at any depth.
func base64Fields(doc any, key string) [][]byte {
	var out [][]byte
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s, ok := v[k].(string); ok && k == key {
					if b, err := b64dec(s); err == nil {
						out = append(out, b)
					}
					continue
				}
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// structuredValues returns the raw StructuredValue JSON in a request or
// response: inputs, resume values and details, results and arguments.
func structuredValues(msgs ...[]byte) [][]byte {
	var out [][]byte
	for _, msg := range msgs {
		if !json.Valid(msg) {
			continue
		}
		get := func(raw json.RawMessage, path ...string) json.RawMessage {
			for _, k := range path {
				var sub map[string]json.RawMessage
				if json.Unmarshal(raw, &sub) != nil {
					return nil
				}
				raw = sub[k]
			}
			return raw
		}
		whole := msg
		var inputs map[string]json.RawMessage
		if json.Unmarshal(get(whole, "options", "inputs"), &inputs) == nil {
			keys := make([]string, 0, len(inputs))
			for k := range inputs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				out = append(out, []byte(inputs[k]))
			}
		}
		for _, path := range [][]string{{"payload", "value"}, {"payload", "error", "details"}, {"result", "step", "value"}} {
			if v := get(whole, path...); v != nil {
				out = append(out, v)
			}
		}
		var args []json.RawMessage
		if json.Unmarshal(get(whole, "result", "step", "args"), &args) == nil {
			for _, a := range args {
				out = append(out, a)
			}
		}
	}
	return out
}

// WriteSeeds replaces the generated seed files under root with files.
func WriteSeeds(root string, files map[string][]byte) error {
	for _, dir := range seedDirs {
		old, _ := filepath.Glob(filepath.Join(root, dir, SeedPrefix+"*"))
		for _, path := range old {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	for path, b := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// StaleSeeds lists differences between the generated seed files under root
// and files: missing, changed or left over.
func StaleSeeds(root string, files map[string][]byte) []string {
	var diffs []string
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			diffs = append(diffs, "missing "+path)
		} else if !bytes.Equal(got, want) {
			diffs = append(diffs, "changed "+path)
		}
	}
	for _, dir := range seedDirs {
		old, _ := filepath.Glob(filepath.Join(root, dir, SeedPrefix+"*"))
		for _, full := range old {
			rel, _ := filepath.Rel(root, full)
			if _, ok := files[rel]; !ok {
				diffs = append(diffs, "left over "+rel)
			}
		}
	}
	sort.Strings(diffs)
	return diffs
}

// ModuleRoot is the nearest directory at or above the working directory
// holding go.mod: where the seed directories are.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run inside the mustard-sidecar module")
		}
		dir = parent
	}
}
