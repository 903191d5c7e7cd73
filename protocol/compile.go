package protocol

import (
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// compile serves {"method":"compile","source","language"}.
func (s *Session) compile(r compileRequest) (programResult, error) {
	// Compiling is deterministic: a source compiled before in this process
	// gives the same program, served from the cache (hosts recompile the
	// same program for every run).
	// A compile usually comes before the first start: have a realm ready
	// by then.
	s.Warm()
	key := compileKey(r.lang, r.source)
	if id, ok := s.compiled.Get(key); ok {
		if p, ok := s.programs.Get(id); ok {
			return programResult{p}, nil
		}
	}
	s.stats.Compiles++
	o, release := s.compileBound()
	p, err := engine.CompileLanguage(r.source, r.lang, o)
	release()
	if err != nil {
		return programResult{}, err
	}
	p = s.cacheProgram(p)
	if cur, ok := s.programs.Peek(p.ID); ok && cur == p {
		// Only beside its program: the entry keeps the source, which
		// the program's weight counts.
		s.compiled.Add(programKey(p), p.ID, int64(len(p.Source)))
	}
	return programResult{p}, nil
}

// programResult is a compile's program ({"kind":"program"}).
type programResult struct{ p *engine.Program }

func (r programResult) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, len(r.p.Bytes))
	b = append(b, resultOf+wire.KindProgram+`","`+wire.FieldProgramID+`":"`...)
	b = append(b, r.p.ID...)
	b = append(b, '"')
	b, payload := appendRaw(b, jsonl, wire.FieldProgramBase64, r.p.Bytes)
	return Response{Header: append(b, "}}"...), Payload: payload}
}
