// Package link gives package host/run the parts of package host that are
// not host's public API: the Pool's lending of processes (so that a
// resume finds the process holding its parked execution) and the making
// of a stored failure's Error. Package host sets the variables when it
// is initialized; values of host's types cross as `any`.
package link

import (
	"context"
	"log/slog"
)

// A Place is a process a Pool lent: Slot is the Pool's place for it,
// Gen the process's generation in that place (a restarted process has
// another), Client its *host.Client.
type Place struct {
	Slot   any
	Gen    uint64
	Client any
}

// Same reports whether p and q are the same process.
func (p Place) Same(q Place) bool { return p.Slot == q.Slot && p.Gen == q.Gen }

var (
	// Acquire lends a process of pool (a *host.Pool). With a home (a
	// Place an earlier Acquire returned) it waits for that process while
	// it runs; otherwise, or once it died, any free one will do.
	Acquire func(pool any, ctx context.Context, home *Place) (Place, error)
	// Release gives back a Place that Acquire lent.
	Release func(pool any, p Place)
	// PoolLogger is the Logger of pool's PoolConfig, nil if none.
	PoolLogger func(pool any) *slog.Logger
	// Broken kills client (a *host.Client) after it broke the protocol
	// and returns err as the error of a process that exited.
	Broken func(client any, err error) error
	// StoredError is the *host.Error of an execution whose store records
	// its failure text and code (derived from the text if empty).
	StoredError func(method, failure, code string) error
	// LegacyCode is the error code of a failure's text, for failures
	// stored without one ("" if it has none).
	LegacyCode func(failure string) string
)

// For tests of package host/run, on a *host.Pool and a *host.Client.
var (
	// SetStarted has pool tell f about every process it starts.
	SetStarted func(pool any, f func(client any))
	// LiveClients are the clients of pool's running processes.
	LiveClients func(pool any) []any
	// SlotClient is the client of pool's place i, running or not.
	SlotClient func(pool any, i int) any
	// Answered reports whether client's process has answered a request.
	Answered func(client any) bool
	// Uploads is the number of stages client uploaded.
	Uploads func(client any) uint64
	// Outstanding is the number of client's requests awaiting an answer.
	Outstanding func(client any) int
	// Running reports whether client's process runs and is not closing.
	Running func(client any) bool
)

// MaxAttempts bounds how often one step is retried on a fresh process:
// enough to ride out processes killed from outside at a high rate, few
// enough that a step which kills its process every time fails in seconds.
const MaxAttempts = 20
