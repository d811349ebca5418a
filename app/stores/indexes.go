package stores

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// IndexProviderRef indexes stores by ProviderRefIndexKey of their provider
// configuration, so a configuration change finds its stores without a scan.
const IndexProviderRef = "spec.providerConfig.providerRef"

// SetupIndexes registers the store indexes with the manager's cache.
func SetupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &ssv2.SecretStore{}, IndexProviderRef, func(o client.Object) []string {
		s := FromSecretStore(o.(*ssv2.SecretStore))
		ref, err := s.ProviderRef()
		if err != nil {
			return nil
		}
		return []string{ProviderRefIndexKey(ref.Kind, ref.Namespace, ref.Name)}
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, &ssv2.ClusterSecretStore{}, IndexProviderRef, func(o client.Object) []string {
		ref := o.(*ssv2.ClusterSecretStore).Spec.ProviderConfig.ProviderRef
		return []string{ProviderRefIndexKey(ref.Kind, ref.Namespace, ref.Name)}
	})
}

// ForConfig lists the stores using a provider configuration object.
func ForConfig(ctx context.Context, reader client.Reader, kind string, cfg client.Object) ([]*Store, error) {
	key := client.MatchingFields{IndexProviderRef: ProviderRefIndexKey(kind, cfg.GetNamespace(), cfg.GetName())}
	var out []*Store
	var ss ssv2.SecretStoreList
	if err := reader.List(ctx, &ss, client.InNamespace(cfg.GetNamespace()), key); err != nil {
		return nil, err
	}
	for i := range ss.Items {
		out = append(out, FromSecretStore(&ss.Items[i]))
	}
	var css ssv2.ClusterSecretStoreList
	if err := reader.List(ctx, &css, key); err != nil {
		return nil, err
	}
	for i := range css.Items {
		out = append(out, FromClusterSecretStore(&css.Items[i]))
	}
	return out, nil
}
