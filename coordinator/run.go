package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// Run drives c over t until the job is done, aborted, or ctx ends: it
// subscribes to the federation's coordinator subject, hands decoded
// messages to Step, calls Tick every tick, and publishes every output.
// It is the only goroutine that touches c (the transport's handler only
// decodes and queues). Undecodable messages are logged and dropped.
func Run(ctx context.Context, c *Coordinator, t transport.Transport, tick time.Duration) (*protocol.Result, error) {
	if tick <= 0 {
		return nil, fmt.Errorf("coordinator: tick %v must be > 0", tick)
	}
	inbox := make(chan protocol.Message, 256)
	unsub, err := t.Subscribe(protocol.CoordSubject(c.cfg.Federation), func(subject string, data []byte) {
		m, err := protocol.Decode(data)
		if err != nil {
			c.cfg.Logf("coordinator: dropped message on %s: %v", subject, err)
			return
		}
		select {
		case inbox <- m:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	defer unsub()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for !c.Done() {
		var outs []Output
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case m := <-inbox:
			outs = c.Step(m)
		case <-ticker.C:
			outs = c.Tick()
		}
		if err := publish(t, outs); err != nil {
			return nil, err
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return c.Result(), nil
}

func publish(t transport.Transport, outs []Output) error {
	for _, o := range outs {
		b, err := protocol.Encode(o.Msg)
		if err != nil {
			return fmt.Errorf("coordinator: %w", err)
		}
		if err := t.Publish(o.Subject, b); err != nil {
			return fmt.Errorf("coordinator: %w", err)
		}
	}
	return nil
}
