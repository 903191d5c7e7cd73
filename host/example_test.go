package host_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"math"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// One process, driven by hand: compile, start, answer each capability
// call, complete.
func Example() {
	ctx := context.Background()
	c, err := host.NewClient(host.Config{}) // mustard-sidecar from PATH
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	key, err := host.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}

	prog, err := c.Compile(ctx, `const user = get_user(id); user.name + " has " + get_orders(user.id).length + " orders";`)
	if err != nil {
		log.Fatal(err)
	}
	step, err := c.Start(ctx, host.StartRequest{
		Program:      prog,
		Inputs:       map[string]value.Value{"id": value.Number(7)},
		Capabilities: []string{"get_user", "get_orders"},
	})
	for err == nil && step.Suspended != nil {
		s := step.Suspended
		fmt.Println("call", s.Capability)
		var answer value.Value
		switch s.Capability {
		case "get_user":
			answer = value.MustFromGo(map[string]any{"id": 7, "name": "Ada"})
		case "get_orders":
			answer = value.MustFromGo([]string{"A-1", "A-2"})
		}
		step, err = c.Resume(ctx, host.ResumeRequest{
			SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key, Payload: host.Return(answer),
		})
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(step.Value.Str)
	// Output:
	// call get_user
	// call get_orders
	// Ada has 2 orders
}

// Go values become StructuredValues and back; JavaScript's undefined,
// array holes, NaN, ±Infinity and −0 all have a Go form.
func ExampleValueOf() {
	v, err := host.ValueOf(map[string]any{
		"list":    []any{1, host.Hole{}, host.Undefined{}, nil},
		"special": []float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1)},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(v.AppendJSON(nil)))

	var back struct {
		List    []any     `json:"list"`
		Special []float64 `json:"special"`
	}
	if err := host.Decode(v, &back); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%#v %v %v\n", back.List, back.Special[:2], math.Signbit(back.Special[2]))
	// Output:
	// {"Object":{"list":{"Array":[{"Number":{"Finite":1.0}},"Hole","Undefined","Null"]},"special":{"Array":[{"Number":"NaN"},{"Number":"NegInfinity"},{"Number":"NegZero"}]}}}
	// []interface {}{1, host.Hole{}, host.Undefined{}, interface {}(nil)} [NaN -Inf] true
}

// A guest failure is an *host.Error carrying the sidecar's message.
func ExampleError() {
	ctx := context.Background()
	c, err := host.NewClient(host.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Compile(ctx, `const = 1;`)
	var e *host.Error
	if errors.As(err, &e) {
		fmt.Println(e.Kind())
	}
	// Output: Parse
}

func ExampleKey() {
	key, err := host.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(key.Digest())
	fmt.Println(key.Token("407a30137b6d766ab88b480efd8e0daa5dde3583c605ffee1a9a7ff82cdf034e"))
	fmt.Println(key) // never the key itself
	// Output:
	// 3eb1bd439947eb762998e566ccc2e099c791118b2f40579cc4f7da2b5061b7f9
	// 124a6d7b8b9a011371cbbee33cf4288b11266151a7a05c7a07de0cf1d05c08cd
	// host.Key(sha256:3eb1bd439947eb76…)
}

// A sealed execution: the snapshots the Runner stores hide what the
// program was given and told. Keep the seal key (and the snapshot key)
// for as long as stored executions must stay resumable.
func ExampleSealKey() {
	ctx := context.Background()
	pool, err := host.NewPool(host.PoolConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	key, err := host.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	seal, err := host.GenerateSealKey() // or host.NewSealKey(bytes from your secret store)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := pool.Compile(ctx, `charge(card, 12.5).status`)
	if err != nil {
		log.Fatal(err)
	}
	store := &durable.MemoryStore{}
	r := &durable.Runner{Pool: pool, Key: key, SealKey: seal, Store: store}
	var stored []byte
	status, err := r.Run(ctx, durable.Execution{
		ID:      "payment-1",
		Program: prog,
		Inputs:  map[string]value.Value{"card": value.String("4111 1111 1111 1111")},
		Capabilities: map[string]durable.Capability{
			"charge": func(ctx context.Context, call durable.Call) (value.Value, error) {
				cp, _, err := store.Load(ctx, call.Execution)
				if err != nil {
					return value.Value{}, err
				}
				stored = cp.Snapshot // what sits in the store while the call runs
				return value.FromGo(map[string]any{"status": "paid"})
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(status.Str, bytes.Contains(stored, []byte("4111")))
	// Output: paid false
}
