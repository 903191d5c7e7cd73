package durable_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A program as a model writes it: a function of its inputs, a namespaced
// tool, and console lines for progress, which OnLog receives once each
// step is stored.
func ExampleExecution_OnLog() {
	ctx := context.Background()
	pool, err := host.NewPool(host.PoolConfig{Size: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	key, err := host.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	prog, err := pool.Compile(ctx, `async ({ repo }) => {
		console.log("filing in", repo);
		const issue = await github.create_issue({ repo, title: "flaky test" });
		console.info("filed", issue.number);
		return issue.number;
	}`)
	if err != nil {
		log.Fatal(err)
	}
	r := &durable.Runner{Pool: pool, Key: key}
	n, err := r.Run(ctx, durable.Execution{
		ID: "triage-1", Program: prog, Entry: host.EntryCall,
		Inputs:  map[string]value.Value{"repo": value.String("acme/app")},
		Console: host.ConsoleCollect,
		OnLog:   func(l host.LogLine) { fmt.Printf("[%s] %s\n", l.Level, l.Text) },
		Capabilities: map[string]durable.Capability{
			"github.create_issue": func(ctx context.Context, call durable.Call) (value.Value, error) {
				fmt.Println("call", call.Name)
				return value.FromGo(map[string]int{"number": 42})
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("result", n.Num)
	// Output:
	// [log] filing in acme/app
	// call github.create_issue
	// [info] filed 42
	// result 42
}
