package host

import (
	"context"
	"errors"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// CompileTypeScript compiles TypeScript source (the sidecar's feature
// "typescript"): its type syntax is erased, and the program runs as the
// JavaScript that leaves. Errors point into the TypeScript source;
// decorators and import/export declarations fail with a "Parse" *Error.
// The Program's id differs from the same text compiled as JavaScript, and
// it starts like any other. A sidecar without the feature fails with
// "unknown language `typescript`" (code unknown_language).
func (c *Client) CompileTypeScript(ctx context.Context, source string) (Program, error) {
	return c.compile(ctx, source, wire.LanguageTypeScript)
}

// CompileTypeScript is Client.CompileTypeScript on one of the pool's
// processes.
func (p *Pool) CompileTypeScript(ctx context.Context, source string) (Program, error) {
	var err error
	for range maxAttempts {
		var l lease
		if l, err = p.acquire(ctx, nil); err != nil {
			return Program{}, err
		}
		var prog Program
		prog, err = l.c.CompileTypeScript(ctx, source)
		p.release(l)
		if !errors.Is(err, ErrProcessExited) || ctx.Err() != nil {
			return prog, err
		}
	}
	return Program{}, err
}
