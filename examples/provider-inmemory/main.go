// Command provider-inmemory is an eso provider for a store that lives in
// the provider process's memory: a complete out-of-tree provider written
// with eso's sdk package and nothing else of eso. A store is an InMemory
// object (crd.yaml); its spec.secrets seed it, as secrets someone other
// than eso created, and eso may push and delete its own.
package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/eso-dev/eso/sdk"
)

// Spec is the spec of an InMemory configuration.
type Spec struct {
	// Secrets seed the store when it is first used.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Capacity bounds how many keys the store holds; 0 is 1000.
	Capacity int `json:"capacity,omitempty"`
}

// Provider serves InMemory configurations.
var Provider = sdk.Provider[Spec]{
	Kind: "InMemory",
	Validate: func(spec *Spec) error {
		if spec.Capacity < 0 || len(spec.Secrets) > capacity(spec) {
			return fmt.Errorf("capacity %d cannot hold %d seeded secrets", spec.Capacity, len(spec.Secrets))
		}
		return nil
	},
	Connect: func(_ context.Context, spec *Spec, env sdk.Env) (sdk.Client, error) {
		return storeOf(env.Config.String(), spec), nil
	},
}

func main() { sdk.Main(Provider) }

func capacity(spec *Spec) int {
	if spec.Capacity == 0 {
		return 1000
	}
	return spec.Capacity
}

// store is one configuration's secrets; managed marks the keys eso wrote.
type store struct {
	mu       sync.Mutex
	capacity int
	values   map[string][]byte
	managed  map[string]bool
}

var (
	storesMu sync.Mutex
	stores   = map[string]*store{}
)

// storeOf returns the store of a configuration, seeded on first use.
func storeOf(name string, spec *Spec) *store {
	storesMu.Lock()
	defer storesMu.Unlock()
	s, ok := stores[name]
	if !ok {
		s = &store{capacity: capacity(spec), values: map[string][]byte{}, managed: map[string]bool{}}
		for k, v := range spec.Secrets {
			s.values[k] = []byte(v)
		}
		stores[name] = s
	}
	return s
}

// Read implements sdk.Client. The store keeps no versions.
func (s *store) Read(_ context.Context, key, version string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	if !ok || version != "" {
		return nil, fmt.Errorf("%w: key %q version %q", sdk.ErrNotFound, key, version)
	}
	return slices.Clone(v), nil
}

// List implements sdk.Lister.
func (s *store) List(_ context.Context, prefix string, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.values {
		if strings.HasPrefix(k, prefix) && len(keys) < limit {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// State implements sdk.Writer.
func (s *store) State(_ context.Context, key string) (exists, managed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, exists = s.values[key]
	return exists, s.managed[key], nil
}

// Write implements sdk.Writer.
func (s *store) Write(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values[key]; !ok && len(s.values) >= s.capacity {
		return fmt.Errorf("the store is full (%d keys)", s.capacity)
	}
	s.values[key], s.managed[key] = slices.Clone(value), true
	return nil
}

// Delete implements sdk.Writer.
func (s *store) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.values, key)
	delete(s.managed, key)
	return nil
}
