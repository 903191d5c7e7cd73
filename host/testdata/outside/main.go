// A program outside the module that embeds the sidecar.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func main() {
	ctx := context.Background()
	c, err := host.NewClient(host.Config{}) // mustard-sidecar from PATH
	check(err)
	defer c.Close()
	key, err := host.GenerateKey()
	check(err)
	prog, err := c.Compile(ctx, `let s = 0; for (const x of xs) s += double(x); s;`)
	check(err)
	step, err := c.Start(ctx, host.StartRequest{Program: prog, Capabilities: []string{"double"},
		Inputs: map[string]value.Value{"xs": value.MustFromGo([]int{1, 2, 3})}})
	for err == nil && step.Suspended != nil {
		s := step.Suspended
		fmt.Println("double", s.Args[0].Num)
		step, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID,
			Key: key, Payload: host.Return(value.Number(2 * s.Args[0].Num))})
	}
	check(err)
	fmt.Println("result", step.Value.Num)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
