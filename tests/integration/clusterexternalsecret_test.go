package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestClusterExternalSecret: one ExternalSecret per matching namespace,
// following namespaces as their labels change, refusing to take over an
// ExternalSecret it did not create, and syncing for real.
func TestClusterExternalSecret(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	platform := env.Namespace(t, "ces-platform", nil)
	tag := map[string]string{"ces-test": platform}
	a := env.Namespace(t, "ces-a", tag)
	b := env.Namespace(t, "ces-b", tag)
	late := env.Namespace(t, "ces-late", nil)
	taken := env.Namespace(t, "ces-taken", tag)

	css := clusterStore("ces-"+platform, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "shared", platform)})
	create(t, fakeConfig(platform, "shared", map[string]string{"k": "v"}), css)
	create(t, externalSecret(taken, "shared", "ClusterSecretStore", css.Name, map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}))

	ces := &esv1.ClusterExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "ces-" + platform},
		Spec: esv1.ClusterExternalSecretSpec{
			ExternalSecretName:     "shared",
			ExternalSecretMetadata: esv1.ExternalSecretMetadata{Labels: map[string]string{"team": "platform"}},
			NamespaceSelectors:     []*metav1.LabelSelector{{MatchLabels: tag}},
			ExternalSecretSpec: externalSecret("", "", "ClusterSecretStore", css.Name,
				map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}).Spec,
		},
	}
	create(t, ces)

	waitProvisioned := func(want ...string) {
		t.Helper()
		slices.Sort(want)
		eventually(t, fmt.Sprintf("provisioned namespaces %v", want), func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ces), ces); err != nil {
				return err
			}
			if !slices.Equal(ces.Status.ProvisionedNamespaces, want) {
				return fmt.Errorf("provisioned %v, failed %v", ces.Status.ProvisionedNamespaces, ces.Status.FailedNamespaces)
			}
			return nil
		})
	}
	waitProvisioned(a, b)
	if len(ces.Status.FailedNamespaces) != 1 || ces.Status.FailedNamespaces[0].Namespace != taken {
		t.Errorf("failed namespaces = %+v, want %s (its ExternalSecret is not ours)", ces.Status.FailedNamespaces, taken)
	}
	waitReady(t, ces, metav1.ConditionFalse, esv1.ReasonNamespacesFailed)
	for _, ns := range []string{a, b} {
		waitSecretData(t, ns, "shared", map[string]string{"k": "v"})
	}

	// A namespace gains the label: it gets the ExternalSecret.
	relabel(t, late, tag)
	waitProvisioned(a, b, late)
	waitSecretData(t, late, "shared", map[string]string{"k": "v"})

	// A namespace loses it: its ExternalSecret goes.
	relabel(t, a, map[string]string{})
	waitProvisioned(b, late)
	eventually(t, "the ExternalSecret of the unlabelled namespace to go", func() error {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: a, Name: "shared"}, &esv1.ExternalSecret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})

	// An edit of a created ExternalSecret is reverted.
	var es esv1.ExternalSecret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: b, Name: "shared"}, &es); err != nil {
		t.Fatal(err)
	}
	if es.Labels["team"] != "platform" {
		t.Errorf("externalSecretMetadata labels not applied: %v", es.Labels)
	}
	patch := client.MergeFrom(es.DeepCopy())
	es.Spec.Data[0].SecretKey = "edited"
	if err := env.Client.Patch(ctx, &es, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the edit to be reverted", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&es), &es); err != nil {
			return err
		}
		if es.Spec.Data[0].SecretKey != "k" {
			return fmt.Errorf("still %q", es.Spec.Data[0].SecretKey)
		}
		return nil
	})

	// force-sync on the ClusterExternalSecret reaches its ExternalSecrets
	// (each reads its provider again) and leaves with it, as upstream.
	forceSync := func(value string, present bool) {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ces), ces); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(ces.DeepCopy())
		if present {
			metav1.SetMetaDataAnnotation(&ces.ObjectMeta, esv1.AnnotationForceSync, value)
		} else {
			delete(ces.Annotations, esv1.AnnotationForceSync)
		}
		if err := env.Client.Patch(ctx, ces, patch); err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{b, late} {
			eventually(t, fmt.Sprintf("force-sync %q (present %v) on %s", value, present, ns), func() error {
				var got esv1.ExternalSecret
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared"}, &got); err != nil {
					return err
				}
				if v, ok := got.Annotations[esv1.AnnotationForceSync]; ok != present || v != value {
					return fmt.Errorf("annotations %v", got.Annotations)
				}
				return nil
			})
		}
	}
	forceSync("2026-11-25T13:00:00Z", true)
	forceSync("2026-11-25T14:00:00Z", true)
	forceSync("", false)
}

func relabel(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	var ns corev1.Namespace
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels = labels
	if err := env.Client.Update(context.Background(), &ns); err != nil {
		t.Fatal(err)
	}
}
