package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// TestExternalSecretLifecycle runs eso against the control plane and drives an
// ExternalSecret through creation, an edit, drift of its Secret, a provider
// outage and the removal of its remote secret.
func TestExternalSecretLifecycle(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	ns := env.Namespace(t, "lifecycle", nil)
	cfg := fakeConfig(ns, "fake", map[string]string{
		"db":  `{"user":"app","password":"pw1"}`,
		"api": "token-1",
	})
	create(t, cfg, secretStore(ns, "store", storeSpec("Fake", "fake", "")))
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{
		"password": ref("db", "password"),
	})
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}}
	es.Spec.Target.DeletionPolicy = esv1.DeletionPolicyDelete
	create(t, es)

	waitSecretData(t, ns, "app", map[string]string{"user": "app", "password": "pw1"})
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)

	// An edit is picked up at once, not at the next hourly refresh.
	patch := client.MergeFrom(es.DeepCopy())
	es.Spec.Data = append(es.Spec.Data, esv1.ExternalSecretData{SecretKey: "api", RemoteRef: ref("api", "")})
	if err := env.Client.Patch(ctx, es, patch); err != nil {
		t.Fatal(err)
	}
	s := waitSecretData(t, ns, "app", map[string]string{"user": "app", "password": "pw1", "api": "token-1"})

	// Someone edits the Secret: eso puts the provider's data back.
	s.Data["password"] = []byte("tampered")
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"user": "app", "password": "pw1", "api": "token-1"})

	// Someone deletes the Secret: eso recreates it.
	if err := env.Client.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"user": "app", "password": "pw1", "api": "token-1"})

	// A changed provider configuration is picked up at once.
	patch = client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = fakeConfig(ns, "fake", map[string]string{"db": `{"user":"app","password":"pw2"}`, "api": "token-1"}).Spec.Data
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"user": "app", "password": "pw2", "api": "token-1"})

	// One remote secret disappears: under deletionPolicy Delete its key is
	// dropped and the rest stays in sync (as upstream).
	patch = client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = fakeConfig(ns, "fake", map[string]string{"db": `{"user":"app","password":"pw2"}`}).Spec.Data
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"user": "app", "password": "pw2"})

	// Every remote secret is gone and deletionPolicy is Delete: the Secret goes.
	patch = client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = nil
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	// A deletion the policy asked for is healthy (upstream's markAsDone).
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretDeleted)
	eventually(t, "the Secret to be deleted", func() error {
		if secretExists(t, ns, "app") {
			return errString("still there")
		}
		return nil
	})
}

type errString string

func (e errString) Error() string { return string(e) }

// TestCreationPolicies checks Orphan, Merge and None.
func TestCreationPolicies(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "policies", nil)
	create(t,
		fakeConfig(ns, "fake", map[string]string{"k": "remote"}),
		secretStore(ns, "store", storeSpec("Fake", "fake", "")),
		plainSecret(ns, "existing", map[string]string{"mine": "kept"}),
	)
	data := map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}

	orphan := externalSecret(ns, "orphan", "SecretStore", "store", data)
	orphan.Spec.Target.CreationPolicy = esv1.CreatePolicyOrphan
	merge := externalSecret(ns, "merge", "SecretStore", "store", data)
	merge.Spec.Target = esv1.ExternalSecretTarget{Name: "existing", CreationPolicy: esv1.CreatePolicyMerge}
	mergeMissing := externalSecret(ns, "merge-missing", "SecretStore", "store", data)
	mergeMissing.Spec.Target.CreationPolicy = esv1.CreatePolicyMerge
	none := externalSecret(ns, "none", "SecretStore", "store", data)
	none.Spec.Target.CreationPolicy = esv1.CreatePolicyNone
	createOrMerge := externalSecret(ns, "create-or-merge", "SecretStore", "store", data)
	createOrMerge.Spec.Target.CreationPolicy = esv1.CreatePolicyCreateOrMerge
	create(t, orphan, merge, mergeMissing, none, createOrMerge)

	s := waitSecretData(t, ns, "orphan", map[string]string{"k": "remote"})
	if len(s.OwnerReferences) != 0 {
		t.Errorf("creationPolicy Orphan: Secret has owners %v", s.OwnerReferences)
	}
	waitSecretData(t, ns, "existing", map[string]string{"mine": "kept", "k": "remote"})
	// Its owner replaces the data: eso's key is back at once (the Secret is
	// watched; the refresh is an hour away), the owner's stays.
	var existing corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "existing"}, &existing); err != nil {
		t.Fatal(err)
	}
	existing.Data = map[string][]byte{"mine": []byte("replaced")}
	if err := env.Client.Update(context.Background(), &existing); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "existing", map[string]string{"mine": "replaced", "k": "remote"})
	// Nothing to merge into is no failure (upstream's SecretMissing); the
	// target's arrival, watched by name, syncs it at once.
	waitReady(t, mergeMissing, metav1.ConditionTrue, esv1.ReasonSecretMissing)
	if secretExists(t, ns, "merge-missing") {
		t.Errorf("creationPolicy Merge created a Secret")
	}
	create(t, plainSecret(ns, "merge-missing", map[string]string{"mine": "there"}))
	waitSecretData(t, ns, "merge-missing", map[string]string{"mine": "there", "k": "remote"})
	waitReady(t, mergeMissing, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	waitReady(t, none, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	if s := waitSecretData(t, ns, "create-or-merge", map[string]string{"k": "remote"}); len(s.OwnerReferences) != 0 {
		t.Errorf("creationPolicy CreateOrMerge: created Secret has owners %v", s.OwnerReferences)
	}
	// Ready means the sync is done: a Secret it made would exist by now.
	if secretExists(t, ns, "none") {
		t.Errorf("creationPolicy None created a Secret")
	}
}

// TestTargetOwnership: two ExternalSecrets may not fight over one Secret, and
// eso does not take over a Secret it did not create.
func TestTargetOwnership(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "conflict", nil)
	create(t,
		fakeConfig(ns, "fake", map[string]string{"a": "1", "b": "2"}),
		secretStore(ns, "store", storeSpec("Fake", "fake", "")),
	)
	first := externalSecret(ns, "first", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"a": ref("a", "")})
	first.Spec.Target.Name = "shared"
	create(t, first)
	waitSecretData(t, ns, "shared", map[string]string{"a": "1"})

	b := map[string]esv1.ExternalSecretDataRemoteRef{"b": ref("b", "")}
	second := externalSecret(ns, "second", "SecretStore", "store", b)
	second.Spec.Target.Name = "shared"
	orphan := externalSecret(ns, "orphan", "SecretStore", "store", b)
	orphan.Spec.Target = esv1.ExternalSecretTarget{Name: "shared", CreationPolicy: esv1.CreatePolicyOrphan}
	merge := externalSecret(ns, "merge", "SecretStore", "store", b)
	merge.Spec.Target = esv1.ExternalSecretTarget{Name: "shared", CreationPolicy: esv1.CreatePolicyMerge}
	create(t, plainSecret(ns, "users-own", map[string]string{"mine": "x"}))
	adopt := externalSecret(ns, "adopt", "SecretStore", "store", b)
	adopt.Spec.Target.Name = "users-own"
	create(t, second, orphan, merge, adopt)
	for _, es := range []*esv1.ExternalSecret{second, orphan, merge, adopt} {
		waitReady(t, es, metav1.ConditionFalse, esv1.ReasonTargetConflict)
	}
	waitSecretData(t, ns, "shared", map[string]string{"a": "1"})
	waitSecretData(t, ns, "users-own", map[string]string{"mine": "x"})
}

// TestRemoteRefStrategies covers decodingStrategy, conversionStrategy,
// nullBytePolicy and metadataPolicy end to end.
func TestRemoteRefStrategies(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "strategies", nil)
	labelled := plainSecret(ns, "labelled", map[string]string{"k": "v"})
	labelled.Labels = map[string]string{"team": "payments"}
	labelled.Annotations = map[string]string{"owner": "alice"}
	create(t,
		fakeConfig(ns, "fake", map[string]string{
			"b64":     "aGVsbG8=",
			"escaped": `{"user@host":"aGk="}`,
			"nul":     "YQBi", // base64 of "a\x00b"
		}),
		secretStore(ns, "fake", storeSpec("Fake", "fake", "")),
		&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}},
		secretStore(ns, "local", storeSpec("Kubernetes", "local", "")),
		labelled,
	)
	decoded := externalSecret(ns, "decoded", "SecretStore", "fake", nil)
	decoded.Spec.Data = []esv1.ExternalSecretData{
		{SecretKey: "plain", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "b64"}},
		{SecretKey: "decoded", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "b64", DecodingStrategy: esv1.DecodingBase64}},
		{SecretKey: "nul", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "nul", DecodingStrategy: esv1.DecodingAuto}},
	}
	decoded.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{
		Key: "escaped", ConversionStrategy: esv1.ConversionUnicode, DecodingStrategy: esv1.DecodingAuto}}}
	strict := externalSecret(ns, "strict", "SecretStore", "fake", nil)
	strict.Spec.Data = []esv1.ExternalSecretData{{SecretKey: "nul", RemoteRef: esv1.ExternalSecretDataRemoteRef{
		Key: "nul", DecodingStrategy: esv1.DecodingBase64, NullBytePolicy: esv1.NullBytePolicyFail}}}
	meta := externalSecret(ns, "meta", "SecretStore", "local", nil)
	meta.Spec.Data = []esv1.ExternalSecretData{{SecretKey: "team", RemoteRef: esv1.ExternalSecretDataRemoteRef{
		Key: "labelled", Property: "labels.team", MetadataPolicy: esv1.MetadataPolicyFetch}}}
	meta.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{
		Key: "labelled", Property: "annotations", MetadataPolicy: esv1.MetadataPolicyFetch}}}
	fakeMeta := externalSecret(ns, "fake-meta", "SecretStore", "fake", nil)
	fakeMeta.Spec.Data = []esv1.ExternalSecretData{{SecretKey: "x", RemoteRef: esv1.ExternalSecretDataRemoteRef{
		Key: "b64", MetadataPolicy: esv1.MetadataPolicyFetch}}}
	create(t, decoded, strict, meta, fakeMeta)

	waitSecretData(t, ns, "decoded", map[string]string{
		"plain": "aGVsbG8=", "decoded": "hello", "nul": "a\x00b", "user_U0040_host": "hi",
	})
	waitReady(t, strict, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	waitSecretData(t, ns, "meta", map[string]string{"team": "payments", "owner": "alice"})
	waitReady(t, fakeMeta, metav1.ConditionFalse, esv1.ReasonProviderError)
}

// TestImmutableTarget: an immutable Secret is created immutable; a changed
// remote secret is reported, and applied once the Secret is deleted.
func TestImmutableTarget(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	ns := env.Namespace(t, "immutable", nil)
	cfg := fakeConfig(ns, "fake", map[string]string{"k": "v1"})
	create(t, cfg, secretStore(ns, "store", storeSpec("Fake", "fake", "")))
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	es.Spec.Target.Immutable = true
	create(t, es)
	s := waitSecretData(t, ns, "app", map[string]string{"k": "v1"})
	if s.Immutable == nil || !*s.Immutable {
		t.Fatalf("Secret not immutable")
	}

	patch := client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = fakeConfig(ns, "fake", map[string]string{"k": "v2"}).Spec.Data
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonTargetImmutable)
	if err := env.Client.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{"k": "v2"})
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
}

// TestFindRewriteAndSourceRef: dataFrom.find through the default store,
// rewritten keys, and entries reading through a second store (sourceRef),
// whose readiness also gates the ExternalSecret.
func TestFindRewriteAndSourceRef(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	ns := env.Namespace(t, "find", nil)
	tagged := plainSecret(ns, "tagged", map[string]string{"a": "1"})
	tagged.Labels = map[string]string{"export": "yes"}
	local := secretStore(ns, "local", storeSpec("Kubernetes", "not-yet", ""))
	create(t,
		fakeConfig(ns, "fake", map[string]string{"db-user": "app", "db-pass": "pw", "api-token": "t"}),
		secretStore(ns, "fake", storeSpec("Fake", "fake", "")),
		tagged, plainSecret(ns, "untagged", map[string]string{"b": "2"}),
		local,
	)
	es := externalSecret(ns, "app", "SecretStore", "fake", nil)
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{
		{
			Find:    &esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "^db-"}},
			Rewrite: []esv1.ExternalSecretRewrite{{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: "^db-", Target: ""}}},
		},
		{
			Find: &esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: "token"}},
			Rewrite: []esv1.ExternalSecretRewrite{
				{Transform: &esv1.ExternalSecretRewriteTransform{Template: `{{ .value | upper | replace "-" "_" }}`}},
			},
		},
		{
			Find:      &esv1.ExternalSecretFind{Tags: map[string]string{"export": "yes"}},
			SourceRef: &esv1.StoreGeneratorSourceRef{SecretStoreRef: &esv1.SecretStoreRef{Name: "local", Kind: "SecretStore"}},
		},
	}
	es.Spec.Data = []esv1.ExternalSecretData{{
		SecretKey: "b", RemoteRef: ref("untagged", "b"),
		SourceRef: &esv1.StoreSourceRef{SecretStoreRef: esv1.SecretStoreRef{Name: "local"}},
	}}
	create(t, es)

	// The second store is not ready: the ExternalSecret waits for it.
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotReady)

	create(t, &provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}})
	patch := client.MergeFrom(local.DeepCopy())
	local.Spec.ProviderConfig.ProviderRef.Name = "local"
	if err := env.Client.Patch(ctx, local, patch); err != nil {
		t.Fatal(err)
	}
	waitSecretData(t, ns, "app", map[string]string{
		"user": "app", "pass": "pw", "API_TOKEN": "t", "tagged": `{"a":"1"}`, "b": "2",
	})
}

// TestTemplate renders type, labels, annotations and data, with templates
// from the spec, a ConfigMap and a literal.
func TestTemplate(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "template", nil)
	create(t,
		fakeConfig(ns, "fake", map[string]string{"db": `{"user":"app","password":"pw"}`}),
		secretStore(ns, "store", storeSpec("Fake", "fake", "")),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tpl"}, Data: map[string]string{
			"app.properties": "db.user={{ .user }}\ndb.password={{ .password }}\n",
		}},
	)
	literal := "owner: '{{ .user }}'"
	es := externalSecret(ns, "app", "SecretStore", "store", nil)
	es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "db"}}}
	es.Spec.Target.Template = &esv1.ExternalSecretTemplate{
		Type:     corev1.SecretTypeBasicAuth,
		Metadata: esv1.ExternalSecretTemplateMetadata{Labels: map[string]string{"app": "{{ .user }}"}},
		Data:     map[string]string{"username": "{{ .user }}", "password": "{{ .password | upper }}"},
		TemplateFrom: []esv1.TemplateFrom{
			{ConfigMap: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{{Key: "app.properties"}}}},
			{Literal: &literal, Target: esv1.TemplateTargetAnnotations},
		},
	}
	create(t, es)
	s := waitSecretData(t, ns, "app", map[string]string{
		"username": "app", "password": "PW", "app.properties": "db.user=app\ndb.password=pw\n",
	})
	if s.Type != corev1.SecretTypeBasicAuth || s.Labels["app"] != "app" || s.Annotations["owner"] != "app" {
		t.Errorf("type %s, labels %v, annotations %v", s.Type, s.Labels, s.Annotations)
	}
	if s.Labels[esv1.LabelManaged] != "true" {
		t.Errorf("template labels replaced eso's managed label: %v", s.Labels)
	}
}

// TestRetainKeepsTheSecret: under deletionPolicy Retain a vanished remote
// secret is an error and the Secret keeps every key and its resourceVersion.
func TestRetainKeepsTheSecret(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	ns := env.Namespace(t, "retain", nil)
	cfg := fakeConfig(ns, "fake", map[string]string{"a": "1", "b": "2"})
	create(t, cfg, secretStore(ns, "store", storeSpec("Fake", "fake", "")))
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"a": ref("a", ""), "b": ref("b", "")})
	create(t, es)
	before := waitSecretData(t, ns, "app", map[string]string{"a": "1", "b": "2"})

	patch := client.MergeFrom(cfg.DeepCopy())
	cfg.Spec.Data = fakeConfig(ns, "fake", map[string]string{"a": "1"}).Spec.Data
	if err := env.Client.Patch(ctx, cfg, patch); err != nil {
		t.Fatal(err)
	}
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretNotFound)
	after := waitSecretData(t, ns, "app", map[string]string{"a": "1", "b": "2"})
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("a provider error rewrote the Secret under deletionPolicy Retain")
	}
}

// TestRefusedSecretDoesNotLeak: a templated label the API server refuses is
// reported by field, without the (secret) value the API server quoted.
func TestRefusedSecretDoesNotLeak(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "refused", nil)
	create(t,
		fakeConfig(ns, "fake", map[string]string{"token": "not a valid label value: s3cr3t!"}),
		secretStore(ns, "store", storeSpec("Fake", "fake", "")),
	)
	es := externalSecret(ns, "app", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"token": ref("token", "")})
	es.Spec.Target.Template = &esv1.ExternalSecretTemplate{
		MergePolicy: esv1.MergePolicyMerge,
		Metadata:    esv1.ExternalSecretTemplateMetadata{Labels: map[string]string{"leak": "{{ .token }}"}},
	}
	create(t, es)
	msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError)
	if strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "metadata.labels") {
		t.Errorf("message = %q: want the field, never the value", msg)
	}
}

// TestMergeTargetGetsTheExternalSecretsMetadata: as upstream's "should merge
// with existing secret using creationPolicy=Merge", a Secret merged into
// gets the ExternalSecret's labels and annotations beside its own; a label
// the ExternalSecret drops goes, the Secret's own stay, and a refresh that
// changes nothing writes nothing.
func TestMergeTargetGetsTheExternalSecretsMetadata(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	ns := env.Namespace(t, "merge-metadata", nil)
	existing := plainSecret(ns, "existing", map[string]string{"mine": "kept"})
	existing.Labels = map[string]string{"existing-label": "own"}
	existing.Annotations = map[string]string{"existing-annotation": "own"}
	es := externalSecret(ns, "merge", "SecretStore", "store", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	es.Spec.Target = esv1.ExternalSecretTarget{Name: "existing", CreationPolicy: esv1.CreatePolicyMerge}
	es.Labels = map[string]string{"es-label": "es", "dropped-later": "es"}
	es.Annotations = map[string]string{"es-annotation": "es"}
	create(t,
		fakeConfig(ns, "fake", map[string]string{"k": "remote"}),
		secretStore(ns, "store", storeSpec("Fake", "fake", "")),
		existing, es,
	)
	waitSecretData(t, ns, "existing", map[string]string{"mine": "kept", "k": "remote"})
	waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	var s corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "existing"}, &s); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"existing-label": "own", "es-label": "es", "dropped-later": "es"} {
		if s.Labels[k] != v {
			t.Errorf("label %s = %q, want %q (labels: %v)", k, s.Labels[k], v, s.Labels)
		}
	}
	for k, v := range map[string]string{"existing-annotation": "own", "es-annotation": "es"} {
		if s.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, s.Annotations[k], v)
		}
	}

	// A refresh that finds nothing changed writes nothing.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	was := es.Status.SyncedResourceVersion
	annotate(t, es, esv1.AnnotationForceSync, "refresh")
	eventually(t, "the forced refresh", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			return err
		}
		if es.Status.SyncedResourceVersion == was {
			return fmt.Errorf("not refreshed yet")
		}
		return nil
	})
	requireUnchanged(t, &s)

	// The ExternalSecret drops a label: it goes from the Secret, the
	// Secret's own stay.
	patch := []byte(`{"metadata":{"labels":{"dropped-later":null}}}`)
	if err := env.Client.Patch(ctx, es, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dropped label removed", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "existing"}, &s); err != nil {
			return err
		}
		if _, ok := s.Labels["dropped-later"]; ok {
			return fmt.Errorf("labels %v", s.Labels)
		}
		return nil
	})
	if s.Labels["existing-label"] != "own" || s.Labels["es-label"] != "es" || s.Annotations["existing-annotation"] != "own" {
		t.Errorf("the Secret's own or the kept metadata went: labels %v, annotations %v", s.Labels, s.Annotations)
	}
}
