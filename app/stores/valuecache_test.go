package stores

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

func TestValueCacheTTLAndBound(t *testing.T) {
	now := time.Now()
	c := newValueCache(&ssv2.CacheConfig{TTL: metav1.Duration{Duration: time.Minute}, MaxEntries: 3}, newValueBudget(maxCacheBytesTotal))
	c.now = func() time.Time { return now }
	for i := range 10 {
		c.put(fmt.Sprint(i), i)
	}
	if c.len() != 3 {
		t.Fatalf("cache holds %d entries, want at most 3", c.len())
	}
	if _, ok := c.get("0"); ok {
		t.Error("the oldest entry was not evicted")
	}
	c.get("7") // used: survives the next insert
	c.put("10", 10)
	if _, ok := c.get("7"); !ok {
		t.Error("a recently used entry was evicted")
	}
	now = now.Add(2 * time.Minute)
	if _, ok := c.get("7"); ok {
		t.Error("an expired entry was served")
	}
}

// TestValueCacheByteBounds: a store's cache holds at most
// maxCacheBytesPerStore however few entries it has, all caches together at
// most maxCacheBytesTotal, and eviction takes the least recently used
// answer, across stores when the shared bound is reached.
func TestValueCacheByteBounds(t *testing.T) {
	const mib = 1 << 20
	answer := func() []byte { return make([]byte, mib) }
	many := &ssv2.CacheConfig{MaxEntries: 10_000}

	budget := newValueBudget(maxCacheBytesTotal)
	c := newValueCache(many, budget)
	for i := range 3 * maxCacheBytesPerStore / mib {
		c.put(fmt.Sprint(i), answer())
	}
	if c.bytes > maxCacheBytesPerStore || c.len() >= maxCacheBytesPerStore/mib {
		t.Errorf("one store's cache holds %d bytes in %d entries, want at most %d bytes", c.bytes, c.len(), maxCacheBytesPerStore)
	}
	if _, ok := c.get("0"); ok {
		t.Error("the oldest answer was kept past the store's byte bound")
	}
	c.put("huge", make([]byte, maxCacheBytesPerStore))
	if _, ok := c.get("huge"); ok {
		t.Error("an answer larger than the store's whole bound was cached")
	}

	budget = newValueBudget(maxCacheBytesTotal)
	stores := make([]*valueCache, 2*maxCacheBytesTotal/maxCacheBytesPerStore)
	for i := range stores {
		stores[i] = newValueCache(many, budget)
		for j := range maxCacheBytesPerStore/mib - 1 {
			stores[i].put(fmt.Sprint(j), answer())
		}
		stores[0].get("0") // the first store's first answer stays in use
	}
	if budget.bytes > maxCacheBytesTotal {
		t.Errorf("all caches hold %d bytes, want at most %d", budget.bytes, maxCacheBytesTotal)
	}
	if _, ok := stores[0].get("0"); !ok {
		t.Error("an answer in use was evicted before ones nobody used")
	}
	if _, ok := stores[0].get("1"); ok {
		t.Error("the least recently used answer of all stores was kept")
	}
	last := stores[len(stores)-1]
	if _, ok := last.get("0"); !ok {
		t.Error("the newest store's answers were evicted")
	}

	held := budget.bytes
	last.clear()
	if budget.bytes >= held || last.len() != 0 {
		t.Errorf("clearing a cache left the budget at %d bytes (was %d)", budget.bytes, held)
	}
	last.put("late", answer()) // a sync that still holds the replaced cache
	if last.len() != 0 {
		t.Error("a retired cache took a new answer")
	}

	// A changed store or configuration, and a forgotten store, give their
	// answers' bytes back.
	clients := NewClientCache()
	key := clientKey{storeKind: "SecretStore", storeNamespace: "team", storeName: "s"}
	clients.Values(key, "v1", nil).put("a", answer())
	clients.Values(key, "v2", nil).put("a", answer())
	if got := clients.budget.bytes; got > mib+answerSize("a", nil) {
		t.Errorf("after a new fingerprint the budget holds %d bytes, want one answer's", got)
	}
	clients.Forget(context.Background(), "SecretStore", "team", "s")
	if clients.budget.bytes != 0 {
		t.Errorf("after Forget the budget holds %d bytes, want 0", clients.budget.bytes)
	}
}

func TestCachingPolicies(t *testing.T) {
	for p, want := range map[ssv2.CachingPolicy][2]bool{
		ssv2.CachingProviderDefined: {true, false},
		ssv2.CachingAuth:            {true, false},
		ssv2.CachingSecrets:         {false, true},
		ssv2.CachingAll:             {true, true},
		ssv2.CachingNone:            {false, false},
	} {
		if cachesAuth(p) != want[0] || cachesSecrets(p) != want[1] {
			t.Errorf("%s: auth %v secrets %v, want %v", p, cachesAuth(p), cachesSecrets(p), want)
		}
	}
}

type jsonStub struct{ stubClient }

func (*jsonStub) PropertiesAreJSONPaths() {}

// TestCachingKeepsTheJSONPropertiesMarker: behind the cache, core must still
// see that properties are JSON paths, or it reads a secret once per property.
func TestCachingKeepsTheJSONPropertiesMarker(t *testing.T) {
	cache := newValueCache(nil, newValueBudget(maxCacheBytesTotal))
	if _, ok := newCachingClient(&jsonStub{}, cache).(plugin.JSONProperties); !ok {
		t.Error("the cache hid the marker")
	}
	if _, ok := newCachingClient(&stubClient{}, cache).(plugin.JSONProperties); ok {
		t.Error("the cache added a marker the provider does not have")
	}
}
