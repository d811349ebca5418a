package manager

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newRESTMapper is controller-runtime's discovery-backed mapper with its
// answers to RESTMapping remembered. Every status write (through the
// metadata client) and every read of a sharded cache asks for a kind's
// mapping, and the mapper built each answer afresh: about 8 KiB and 20 µs a
// call, a twentieth of a replica's CPU in a first sync.
func newRESTMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &rememberedMappings{RESTMapper: m}, nil
}

// rememberedMappings keeps the mappings its RESTMapper found. Only found
// ones: a kind not yet served is asked again, which is how the mapper
// learns of CRDs installed later. A found mapping is kept for the
// process's life, as the mapper itself keeps what discovery told it until
// a kind it does not know is asked for. The kinds found are the cluster's,
// so they bound what is kept, whatever names the objects eso reads give.
type rememberedMappings struct {
	meta.RESTMapper
	found sync.Map // mappingKey -> *meta.RESTMapping
}

// mappingKey is what a RESTMapping call asks, without allocating for the
// usual call of one version.
type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

func keyOf(gk schema.GroupKind, versions []string) mappingKey {
	switch len(versions) {
	case 0:
		return mappingKey{gk: gk}
	case 1:
		return mappingKey{gk: gk, versions: versions[0]}
	}
	return mappingKey{gk: gk, versions: strings.Join(versions, ",")}
}

// RESTMapping answers from what it found before, or asks the mapper. The
// mapping is shared: its callers read it, as they do the mapper's own.
func (r *rememberedMappings) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := keyOf(gk, versions)
	if m, ok := r.found.Load(key); ok {
		return m.(*meta.RESTMapping), nil
	}
	m, err := r.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	r.found.Store(key, m)
	return m, nil
}
