package stores

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/providers"
)

func TestValueCacheTTLAndBound(t *testing.T) {
	now := time.Now()
	c := newValueCache(&ssv2.CacheConfig{TTL: metav1.Duration{Duration: time.Minute}, MaxEntries: 3})
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
	cache := newValueCache(nil)
	if _, ok := newCachingClient(&jsonStub{}, cache).(providers.JSONProperties); !ok {
		t.Error("the cache hid the marker")
	}
	if _, ok := newCachingClient(&stubClient{}, cache).(providers.JSONProperties); ok {
		t.Error("the cache added a marker the provider does not have")
	}
}
