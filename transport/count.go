package transport

import "sync/atomic"

// Traffic counts the messages and payload bytes a transport endpoint
// published and delivered to its subscribers (whole messages, before
// chunking and after reassembly).
type Traffic struct {
	PublishedMessages uint64 `json:"published_messages"`
	PublishedBytes    uint64 `json:"published_bytes"`
	ReceivedMessages  uint64 `json:"received_messages"`
	ReceivedBytes     uint64 `json:"received_bytes"`
}

// Counter is a Transport that counts the traffic of the one it wraps.
// It is safe for concurrent use.
type Counter struct {
	inner               Transport
	pubMsgs, pubBytes   atomic.Uint64
	recvMsgs, recvBytes atomic.Uint64
}

var _ Transport = (*Counter)(nil)

// Count wraps t.
func Count(t Transport) *Counter { return &Counter{inner: t} }

// Traffic returns the counters.
func (c *Counter) Traffic() Traffic {
	return Traffic{PublishedMessages: c.pubMsgs.Load(), PublishedBytes: c.pubBytes.Load(),
		ReceivedMessages: c.recvMsgs.Load(), ReceivedBytes: c.recvBytes.Load()}
}

// Publish publishes on the inner transport and counts data if that
// succeeded.
func (c *Counter) Publish(subject string, data []byte) error {
	if err := c.inner.Publish(subject, data); err != nil {
		return err
	}
	c.pubMsgs.Add(1)
	c.pubBytes.Add(uint64(len(data)))
	return nil
}

// Subscribe subscribes on the inner transport, counting every message
// handed to h.
func (c *Counter) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	return c.inner.Subscribe(subject, func(s string, data []byte) {
		c.recvMsgs.Add(1)
		c.recvBytes.Add(uint64(len(data)))
		h(s, data)
	})
}

// Close closes the inner transport.
func (c *Counter) Close() error { return c.inner.Close() }
