// Package v1compat serves upstream's external-secrets.io/v1 SecretStores and
// ClusterSecretStores: each is translated, field by field, into the store
// and provider configuration the v2alpha1 path uses, so that reads, writes,
// caching, gating and metrics are the same code. Builds with the tag nov1
// leave this package out.
package v1compat

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// APIs are the v1 store kinds, read through translation with endpoints.
func APIs(endpoints Endpoints) []stores.API {
	return []stores.API{
		{
			APIVersion: stores.StoreAPIVersionV1, Kind: stores.KindSecretStore,
			New:     func() client.Object { return &v1stores.SecretStore{} },
			NewList: func() client.ObjectList { return &v1stores.SecretStoreList{} },
			Wrap:    func(o client.Object) *stores.Store { return Wrap(o, endpoints) },
			Items:   func(l client.ObjectList) []client.Object { return stores.ItemsOf(l.(*v1stores.SecretStoreList).Items) },
			Status: func(o client.Object) *ssv2.SecretStoreStatus {
				return &o.(*v1stores.SecretStore).Status.SecretStoreStatus
			},
		},
		{
			APIVersion: stores.StoreAPIVersionV1, Kind: stores.KindClusterSecretStore,
			New:     func() client.Object { return &v1stores.ClusterSecretStore{} },
			NewList: func() client.ObjectList { return &v1stores.ClusterSecretStoreList{} },
			Wrap:    func(o client.Object) *stores.Store { return Wrap(o, endpoints) },
			Items: func(l client.ObjectList) []client.Object {
				return stores.ItemsOf(l.(*v1stores.ClusterSecretStoreList).Items)
			},
			Status: func(o client.Object) *ssv2.SecretStoreStatus {
				return &o.(*v1stores.ClusterSecretStore).Status.SecretStoreStatus
			},
		},
	}
}

// Wrap sees a v1 SecretStore or ClusterSecretStore as the v2 store it
// translates to (what the resolver serves, and what eso migrate writes).
func Wrap(obj client.Object, endpoints Endpoints) *stores.Store {
	if css, ok := obj.(*v1stores.ClusterSecretStore); ok {
		return wrap(obj, &css.Spec, &css.Status, true, endpoints)
	}
	ss := obj.(*v1stores.SecretStore)
	return wrap(obj, &ss.Spec, &ss.Status, false, endpoints)
}

// wrap sees a v1 store as the v2 store it translates to.
func wrap(obj client.Object, spec *v1stores.SecretStoreSpec, status *v1stores.SecretStoreStatus, cluster bool, endpoints Endpoints) *stores.Store {
	s := &stores.Store{
		Kind: stores.KindSecretStore, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
		Generation: obj.GetGeneration(), Status: &status.SecretStoreStatus, Object: obj, APIVersion: stores.StoreAPIVersionV1,
	}
	v2 := &ssv2.SecretStoreSpec{Controller: spec.Controller, GatingPolicy: ssv2.GatingEnabled, CachingPolicy: ssv2.CachingProviderDefined}
	var problems []string
	if d, err := RefreshInterval(spec.RefreshInterval); err != nil {
		problems = append(problems, "spec.refreshInterval: "+err.Error())
	} else {
		v2.RefreshInterval = d
	}
	var notes []string
	if rs := spec.RetrySettings; rs != nil {
		notes = append(notes, "spec.retrySettings: eso retries failed provider calls with its own backoff")
		v2.RetrySettings = &ssv2.RetrySettings{MaxRetries: rs.MaxRetries}
		if rs.RetryInterval != nil {
			d, err := time.ParseDuration(*rs.RetryInterval)
			if err != nil {
				problems = append(problems, "spec.retrySettings.retryInterval: "+err.Error())
			} else {
				v2.RetrySettings.RetryInterval = &metav1.Duration{Duration: d}
			}
		}
	}
	var t Translation
	if spec.Provider != nil {
		t = Translate(*spec.Provider, cluster, obj.GetNamespace(), obj.GetName(), endpoints)
	} else {
		t.Unsupported = []string{"spec.provider: " + errNoProvider.Error()}
	}
	t.Unsupported = append(problems, t.Unsupported...)
	v2.ProviderConfig = t.Config
	if t.Inline != nil {
		// The configuration's identity is the store's: providers key state
		// by it (the Fake provider its pushed values), and it lives as long
		// as its owner, the store (which the Fake provider looks up to
		// release what it pushed).
		t.Inline.SetUID(obj.GetUID())
		t.Inline.SetGeneration(obj.GetGeneration())
		kind := stores.KindSecretStore
		if cluster {
			kind = stores.KindClusterSecretStore
		}
		t.Inline.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: v1stores.GroupVersion.String(), Kind: kind, Name: obj.GetName(), UID: obj.GetUID()}})
	}
	s.Spec, s.Inline, s.Untranslatable, s.Notes = v2, t.Inline, t.Err(), append(notes, t.Notes...)
	if cluster {
		s.Kind = stores.KindClusterSecretStore
		s.Cluster = &ssv2.ClusterSecretStoreSpec{SecretStoreSpec: *v2, AuthenticationScope: t.Scope}
		for _, c := range spec.Conditions {
			s.Cluster.Conditions = append(s.Cluster.Conditions, ssv2.ClusterSecretStoreCondition{
				NamespaceSelector: c.NamespaceSelector, Namespaces: c.Namespaces, NamespaceRegexes: c.NamespaceRegexes})
		}
		s.Spec = &s.Cluster.SecretStoreSpec
	} else if len(spec.Conditions) > 0 {
		s.Untranslatable = joinErr(s.Untranslatable, "spec.conditions: only a ClusterSecretStore has conditions")
	}
	return s
}

// RefreshInterval reads upstream's store refreshInterval: seconds, or a
// duration string; 0 or absent means eso's default.
func RefreshInterval(v *intstr.IntOrString) (*metav1.Duration, error) {
	if v == nil {
		return nil, nil
	}
	var d time.Duration
	if v.Type == intstr.Int {
		d = time.Duration(v.IntVal) * time.Second
	} else {
		var err error
		if d, err = time.ParseDuration(v.StrVal); err != nil {
			return nil, err
		}
	}
	switch {
	case d == 0:
		return nil, nil
	case d < time.Second:
		return nil, fmt.Errorf("must be 0 or at least 1s")
	}
	return &metav1.Duration{Duration: d}, nil
}

func joinErr(err error, more string) error {
	if err == nil {
		return fmt.Errorf("%w: %s", plugin.ErrInvalidConfig, more)
	}
	return fmt.Errorf("%w; %s", err, strings.TrimSpace(more))
}
