package durable_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The run loop: capabilities are Go functions, every step is stored, and a
// sidecar that dies is replaced without the capabilities noticing.
func ExampleRunner() {
	ctx := context.Background()
	pool, err := host.NewPool(host.PoolConfig{Size: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	key, err := host.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	prog, err := pool.Compile(ctx, `
		let total = 0;
		for (const sku of skus) {
			try { total += price(sku); } catch (e) { if (e.code !== "UNKNOWN_SKU") throw e; }
		}
		total;`)
	if err != nil {
		log.Fatal(err)
	}
	prices := map[string]float64{"apple": 0.5, "pear": 0.75}
	r := &durable.Runner{Pool: pool, Key: key, Store: &durable.MemoryStore{}}
	total, err := r.Run(ctx, durable.Execution{
		ID:      "basket-1",
		Program: prog,
		Inputs:  map[string]value.Value{"skus": value.MustFromGo([]string{"apple", "kiwi", "pear"})},
		Capabilities: map[string]durable.Capability{
			"price": func(ctx context.Context, call durable.Call) (value.Value, error) {
				var sku string
				if err := call.Decode(&sku); err != nil {
					return value.Value{}, err
				}
				p, ok := prices[sku]
				if !ok {
					return value.Value{}, host.CallError{Name: "LookupError", Message: "no such sku: " + sku, Code: "UNKNOWN_SKU"}
				}
				return value.Number(p), nil
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(total.Num)
	// Output: 1.25
}

// Calls made in async code run concurrently: the three prices are asked
// at once, each on its own goroutine, and Call.ID numbers them in the
// order the guest made them (an idempotency key for tools with effects).
func ExampleRunner_concurrentCalls() {
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
	prog, err := pool.Compile(ctx, `
		const prices = await Promise.all(skus.map((sku) => price(sku)));
		prices.reduce((a, b) => a + b, 0);`)
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	ids := map[string]uint64{}
	r := &durable.Runner{Pool: pool, Key: key, MaxConcurrentCalls: 8}
	total, err := r.Run(ctx, durable.Execution{
		ID:      "basket-2",
		Program: prog,
		Inputs:  map[string]value.Value{"skus": value.MustFromGo([]string{"apple", "pear", "plum"})},
		Capabilities: map[string]durable.Capability{
			"price": func(ctx context.Context, call durable.Call) (value.Value, error) {
				var sku string
				if err := call.Decode(&sku); err != nil {
					return value.Value{}, err
				}
				mu.Lock() // calls run concurrently
				ids[sku] = call.ID
				mu.Unlock()
				return value.Number(map[string]float64{"apple": 0.5, "pear": 0.75, "plum": 1}[sku]), nil
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(total.Num, ids)
	// Output: 2.25 map[apple:1 pear:2 plum:3]
}
