package durable_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// span is a stand-in for a tracer's span (OpenTelemetry's, say): a name,
// attributes set when it ends, and children.
type span struct {
	name     string
	mu       sync.Mutex
	children []*span
}

type spanKey struct{}

// startSpan starts a span, the child of the one in ctx, as a tracer's
// Start does.
func startSpan(ctx context.Context, name string) (context.Context, *span) {
	s := &span{name: name}
	if parent, ok := ctx.Value(spanKey{}).(*span); ok {
		parent.mu.Lock()
		parent.children = append(parent.children, s)
		parent.mu.Unlock()
	}
	return context.WithValue(ctx, spanKey{}, s), s
}

func (s *span) print(indent string) {
	fmt.Println(indent + s.name)
	for _, c := range s.children {
		c.print(indent + "  ")
	}
}

// Logs and traces: the pool and the runner log to a slog.Logger (process
// starts and exits, respawns, cold resumes, limits hit), and an
// Interceptor opens a span per execution, per segment and per tool call,
// nested through the context as a tracer's spans are.
func ExampleInterceptor() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	pool, err := host.NewPool(host.PoolConfig{Size: 1, Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	key, err := host.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	prog, err := pool.Compile(ctx, `const user = get_user(id); user.name + ": " + get_orders(user.id).length + " orders";`)
	if err != nil {
		log.Fatal(err)
	}

	var root *span
	r := &durable.Runner{Pool: pool, Key: key, Intercept: durable.Interceptor{
		Execution: func(ctx context.Context, e *durable.ExecutionInfo, next func(context.Context) error) error {
			ctx, root = startSpan(ctx, "execution "+e.ID)
			return next(ctx)
		},
		Segment: func(ctx context.Context, s *durable.SegmentInfo, next func(context.Context) error) error {
			ctx, sp := startSpan(ctx, "segment")
			err := next(ctx) // the Runner fills in s meanwhile
			kind := "start"
			if !s.Start {
				kind = "cold resume"
				if s.Hot {
					kind = "hot resume"
				}
			}
			sp.name = fmt.Sprintf("segment: %s with %d answers, suspended=%v", kind, s.Answers, s.Suspended)
			return err
		},
		Call: func(ctx context.Context, c durable.Call, next func(context.Context) (value.Value, error)) (value.Value, error) {
			ctx, _ = startSpan(ctx, fmt.Sprintf("call %d: %s", c.ID, c.Name))
			return next(ctx)
		},
	}}
	v, err := r.Run(ctx, durable.Execution{ID: "order-7", Program: prog,
		Inputs: map[string]value.Value{"id": value.Number(7)},
		Capabilities: map[string]durable.Capability{
			"get_user": func(context.Context, durable.Call) (value.Value, error) {
				return value.FromGo(map[string]any{"id": 7, "name": "Ada"})
			},
			"get_orders": func(context.Context, durable.Call) (value.Value, error) {
				return value.FromGo(strings.Split("A-1 A-2", " "))
			},
		}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Str)
	root.print("")
	// Output:
	// Ada: 2 orders
	// execution order-7
	//   segment: start with 0 answers, suspended=true
	//     call 1: get_user
	//   segment: hot resume with 1 answers, suspended=true
	//     call 2: get_orders
	//   segment: hot resume with 1 answers, suspended=false
}
