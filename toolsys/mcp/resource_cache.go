package mcp

// This file keeps the resources a Client has read from a server that
// offers subscriptions (resources.subscribe): the Client subscribes to a
// resource before it reads it, keeps what it read, and forgets it when the
// server says the resource was updated (notifications/resources/updated).

import (
	"bytes"
	"context"
	"maps"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCachedResources bounds the resources a Client keeps; a read past it
// goes to the server and is not kept.
const maxCachedResources = 64

// resourceCache holds the resources read under a subscription. It is safe
// for concurrent use.
type resourceCache struct {
	mu      sync.Mutex
	entries map[string]*sdk.ReadResourceResult
	// gens counts the updates of each URI: a read that started before an
	// update is not kept.
	gens map[string]uint64
	// subscribed holds the URIs the server accepted a subscription for.
	subscribed map[string]bool
}

// get returns a copy of the kept result for uri.
func (rc *resourceCache) get(uri string) (*sdk.ReadResourceResult, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	res, ok := rc.entries[uri]
	if !ok {
		return nil, false
	}
	return cloneReadResult(res), true
}

// gen returns the number of updates of uri seen so far.
func (rc *resourceCache) gen(uri string) uint64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.gens[uri]
}

// put keeps res for uri, read when uri had seen gen updates, unless it has
// been updated since, the cache is full, or res is not a complete answer
// (it asks for more input). It keeps a copy: the caller may change res.
func (rc *resourceCache) put(uri string, gen uint64, res *sdk.ReadResourceResult) {
	if res == nil || len(res.InputRequests) > 0 || res.RequestState != "" {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gens[uri] != gen || len(rc.entries) >= maxCachedResources {
		return
	}
	if rc.entries == nil {
		rc.entries = map[string]*sdk.ReadResourceResult{}
	}
	rc.entries[uri] = cloneReadResult(res)
}

// cloneReadResult copies res deeply enough that no caller can change what
// another one reads: the contents, their bytes and their metadata.
func cloneReadResult(res *sdk.ReadResourceResult) *sdk.ReadResourceResult {
	out := *res
	out.Meta = maps.Clone(res.Meta)
	out.Contents = make([]*sdk.ResourceContents, len(res.Contents))
	for i, c := range res.Contents {
		if c == nil {
			continue
		}
		cc := *c
		cc.Blob = bytes.Clone(c.Blob)
		cc.Meta = maps.Clone(c.Meta)
		out.Contents[i] = &cc
	}
	return &out
}

// invalidate forgets uri: the server updated it.
func (rc *resourceCache) invalidate(uri string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	delete(rc.entries, uri)
	if rc.gens == nil {
		rc.gens = map[string]uint64{}
	}
	rc.gens[uri]++
}

// isSubscribed reports whether the server accepted a subscription to uri.
func (rc *resourceCache) isSubscribed(uri string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.subscribed[uri]
}

// markSubscribed records the server's acceptance of a subscription to uri.
func (rc *resourceCache) markSubscribed(uri string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.subscribed == nil {
		rc.subscribed = map[string]bool{}
	}
	rc.subscribed[uri] = true
}

// subscriber is what subscribing needs of a session; *sdk.ClientSession
// has it.
type subscriber interface {
	Subscribe(ctx context.Context, p *sdk.SubscribeParams) error
}

// canSubscribe reports whether the server offers resource subscriptions.
func (c *Client) canSubscribe() bool {
	ir := c.sess.InitializeResult()
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Resources == nil {
		return false
	}
	_, ok := c.sess.(subscriber)
	return ok && ir.Capabilities.Resources.Subscribe
}

// subscribe subscribes to uri once, and reports whether the Client holds a
// subscription to it. A server that refuses is read without caching.
func (c *Client) subscribe(ctx context.Context, uri string) bool {
	if c.cache.isSubscribed(uri) {
		return true
	}
	if err := c.sess.(subscriber).Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		c.log.Debug().Str("uri", uri).Err(err).Msg("mcp: the server refused a resource subscription; the resource is read each time")
		return false
	}
	c.cache.markSubscribed(uri)
	return true
}

// resourceUpdated forgets what the Client kept of the resource the server
// updated.
func (c *Client) resourceUpdated(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	if req.Params == nil {
		return
	}
	c.cache.invalidate(req.Params.URI)
	c.log.Debug().Str("uri", req.Params.URI).Msg("mcp: the server updated a resource")
}
