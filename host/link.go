package host

import (
	"context"
	"log/slog"

	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"
)

func init() {
	link.Acquire = func(pool any, ctx context.Context, home *link.Place) (link.Place, error) {
		var h *lease
		if home != nil && home.Slot != nil {
			h = &lease{s: home.Slot.(*slot), c: home.Client.(*Client), gen: home.Gen}
		}
		l, err := pool.(*Pool).acquire(ctx, h)
		if err != nil {
			return link.Place{}, err
		}
		return link.Place{Slot: l.s, Gen: l.gen, Client: l.c}, nil
	}
	link.Release = func(pool any, p link.Place) {
		pool.(*Pool).release(lease{s: p.Slot.(*slot), c: p.Client.(*Client), gen: p.Gen})
	}
	link.PoolLogger = func(pool any) *slog.Logger { return pool.(*Pool).cfg.Logger }
	link.Broken = func(client any, err error) error { return client.(*Client).broken(err) }
	link.StoredError = func(method, failure, code string) error { return storedError(method, failure, code) }
	link.LegacyCode = legacyCode

	link.SetStarted = func(pool any, f func(any)) { pool.(*Pool).started = func(c *Client) { f(c) } }
	link.LiveClients = func(pool any) []any {
		p := pool.(*Pool)
		p.mu.Lock()
		defer p.mu.Unlock()
		var out []any
		for _, s := range p.slots {
			if p.alive(s, s.gen) {
				out = append(out, s.client)
			}
		}
		return out
	}
	link.SlotClient = func(pool any, i int) any {
		p := pool.(*Pool)
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.slots[i].client
	}
	link.Answered = func(client any) bool { return client.(*Client).answered.Load() }
	link.Uploads = func(client any) uint64 { return client.(*Client).uploads.Load() }
	link.Outstanding = func(client any) int { return client.(*Client).outstanding() }
	link.Running = func(client any) bool { return client.(*Client).running() }
}
