package externalsecret

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
)

// countingReader counts the Secrets read through it.
type countingReader struct {
	client.Reader
	reads int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		c.reads++
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// esoWritten is the target as es wrote it under its creation policy.
func esoWritten(es *esv1.ExternalSecret, mutate func(*corev1.Secret)) *corev1.Secret {
	data := map[string][]byte{"a": []byte("1")}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: es.Namespace, Name: es.TargetName(), UID: "secret-uid",
			Labels:      map[string]string{esv1.LabelManaged: esv1.LabelManagedValue},
			Annotations: map[string]string{esv1.AnnotationDataHash: dataHash(data), esv1.AnnotationManagedBy: es.Name}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

// TestReadTarget: the target's metadata comes from the cache; the whole
// Secret is read from the API server unless this process verified it at
// the version the cache shows.
func TestReadTarget(t *testing.T) {
	type record struct {
		version, secretUID, esUID string
		merges                    bool
	}
	current := func() record { return record{version: "<current>", secretUID: "secret-uid", esUID: "uid-1"} }
	cases := map[string]struct {
		policy   esv1.CreationPolicy
		cached   bool // the Secret is in the cache (labelled as eso's)
		inAPI    bool // the Secret exists
		trimmed  bool // the cache holds only part of its eso metadata
		drifted  bool // its data is not what eso wrote
		record   *record
		wantRead bool // the whole Secret is read from the API server
		wantNil  bool
		wantRec  bool // a record vouches for the target afterwards
	}{
		"None reads nothing":               {policy: esv1.CreatePolicyNone, cached: true, inAPI: true, wantNil: true},
		"Owner, not cached: created":       {policy: esv1.CreatePolicyOwner, wantNil: true},
		"Merge, not cached: read":          {policy: esv1.CreatePolicyMerge, inAPI: true, wantRead: true, wantRec: true},
		"Merge, nowhere: missing":          {policy: esv1.CreatePolicyMerge, wantRead: true, wantNil: true},
		"cached, no record (a restart)":    {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true, wantRead: true, wantRec: true},
		"cached, recorded at this version": {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true, record: new(current()), wantRec: true},
		"Orphan, recorded at this version": {policy: esv1.CreatePolicyOrphan, cached: true, inAPI: true, record: new(current()), wantRec: true},
		"recorded at another version":      {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true, record: &record{version: "1", secretUID: "secret-uid", esUID: "uid-1"}, wantRead: true, wantRec: true},
		"recorded for a Secret since recreated": {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true,
			record: &record{version: "<current>", secretUID: "old-uid", esUID: "uid-1"}, wantRead: true, wantRec: true},
		"recorded for an ExternalSecret since recreated": {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true,
			record: &record{version: "<current>", secretUID: "secret-uid", esUID: "old-es"}, wantRead: true, wantRec: true},
		"recorded under a policy that merged": {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true,
			record: &record{version: "<current>", secretUID: "secret-uid", esUID: "uid-1", merges: true}, wantRead: true, wantRec: true},
		"cache trimmed: read whole": {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true, trimmed: true, record: new(current()),
			wantRead: true, wantRec: true},
		"drifted: read, not recorded": {policy: esv1.CreatePolicyOwner, cached: true, inAPI: true, drifted: true, wantRead: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.CreationPolicy = tc.policy })
			secret := esoWritten(es, func(s *corev1.Secret) {
				if tc.drifted {
					s.Data["a"] = []byte("edited")
				}
			})
			var inAPI, inCache []client.Object
			if tc.inAPI {
				inAPI = append(inAPI, secret.DeepCopy())
			}
			api := fakeClient(t, inAPI...)
			if tc.cached {
				cached := secret.DeepCopy()
				if tc.trimmed {
					cached.Annotations[manager.AnnotationCacheTrimmed] = "true"
				}
				inCache = append(inCache, cached)
			}
			reads := &countingReader{Reader: api}
			r := &Reconciler{Client: api, APIReader: reads, SecretMetadata: fakeClient(t, inCache...)}
			version := ""
			if tc.inAPI {
				var s corev1.Secret
				if err := api.Get(context.Background(), client.ObjectKeyFromObject(secret), &s); err != nil {
					t.Fatal(err)
				}
				version = s.ResourceVersion
			}
			if rec := tc.record; rec != nil {
				if rec.version == "<current>" {
					rec.version = version
				}
				r.verified.Store(esKey(es), verifiedTarget{es: types.UID(rec.esUID), targetRecord: targetRecord{name: es.TargetName(),
					resourceVersion: rec.version, uid: types.UID(rec.secretUID), secretType: corev1.SecretTypeOpaque, merges: rec.merges}})
			}

			target, whole, err := r.readTarget(context.Background(), es)
			if err != nil {
				t.Fatal(err)
			}
			if got := reads.reads > 0; got != tc.wantRead {
				t.Errorf("read the whole Secret: %v, want %v", got, tc.wantRead)
			}
			if (target == nil) != tc.wantNil {
				t.Fatalf("target %v, want nil: %v", target, tc.wantNil)
			}
			if whole != (tc.wantRead || tc.wantNil) {
				t.Errorf("whole %v", whole)
			}
			if target != nil && !whole {
				// The cached metadata, and the type recorded.
				if target.Data != nil || target.Type != corev1.SecretTypeOpaque || target.Annotations[esv1.AnnotationManagedBy] != es.Name {
					t.Errorf("metadata-only target %+v", target)
				}
			}
			if target != nil && whole && string(target.Data["a"]) == "" {
				t.Errorf("whole target without data")
			}
			rec, ok := r.lastVerified(es)
			if ok && target != nil {
				ok = rec.resourceVersion == version && rec.uid == "secret-uid"
			}
			if ok != tc.wantRec {
				t.Errorf("recorded %v (%+v), want %v", ok, rec, tc.wantRec)
			}
		})
	}
}

// TestReadWholeStep: once the provider is read, a target known by its
// metadata only is read whole, and checked again as it is now.
func TestReadWholeStep(t *testing.T) {
	cases := map[string]struct {
		policy       esv1.CreationPolicy
		metadataOnly bool
		inAPI        bool
		takenOver    bool // another owner controls it by now
		wantRead     bool
		wantNil      bool
		wantErr      error
	}{
		"already whole":                   {policy: esv1.CreatePolicyOwner, inAPI: true},
		"metadata only: read":             {policy: esv1.CreatePolicyOwner, metadataOnly: true, inAPI: true, wantRead: true},
		"gone meanwhile, Owner: created":  {policy: esv1.CreatePolicyOwner, metadataOnly: true, wantRead: true, wantNil: true},
		"gone meanwhile, Merge: retried":  {policy: esv1.CreatePolicyMerge, metadataOnly: true, wantRead: true, wantErr: errTargetVanished},
		"taken over meanwhile: refused":   {policy: esv1.CreatePolicyOwner, metadataOnly: true, inAPI: true, takenOver: true, wantRead: true, wantErr: errTargetConflict},
		"metadata only, Orphan: read too": {policy: esv1.CreatePolicyOrphan, metadataOnly: true, inAPI: true, wantRead: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.CreationPolicy = tc.policy })
			secret := esoWritten(es, func(s *corev1.Secret) {
				if tc.takenOver {
					s.Annotations[esv1.AnnotationManagedBy] = "other"
				}
			})
			var objs []client.Object
			if tc.inAPI {
				objs = append(objs, secret.DeepCopy())
			}
			api := fakeClient(t, objs...)
			reads := &countingReader{Reader: api}
			r := &Reconciler{Client: api, APIReader: reads}
			known := esoWritten(es, nil)
			if tc.metadataOnly {
				known.Data = nil
			}
			sc := &syncScope{es: es, target: known, metadataOnly: tc.metadataOnly}
			_, err := r.readWhole(context.Background(), sc)
			var unrecorded unrecordedError
			if errors.As(err, &unrecorded) {
				err = unrecorded.err
			} else if errors.Is(err, errTargetVanished) {
				t.Errorf("a vanished Merge target is recorded as a failure: %v", err)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got := reads.reads > 0; got != tc.wantRead {
				t.Errorf("read %v, want %v", got, tc.wantRead)
			}
			if err != nil {
				return
			}
			if (sc.target == nil) != tc.wantNil || sc.metadataOnly {
				t.Fatalf("target %v metadataOnly %v, want nil: %v", sc.target, sc.metadataOnly, tc.wantNil)
			}
			if sc.target != nil && string(sc.target.Data["a"]) != "1" {
				t.Errorf("target data %q", sc.target.Data)
			}
		})
	}
}
