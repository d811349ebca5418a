package manager

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
)

// keptBytes is what TrimSecret's bound counts of m.
func keptBytes(m metav1.ObjectMeta) int {
	n := 0
	for k, v := range m.Labels {
		n += len(k) + len(v)
	}
	for k, v := range m.Annotations {
		if k != AnnotationCacheTrimmed {
			n += len(k) + len(v)
		}
	}
	for _, o := range m.OwnerReferences {
		n += len(o.APIVersion) + len(o.Kind) + len(o.Name) + len(o.UID)
	}
	return n
}

func TestTrimSecret(t *testing.T) {
	controller := metav1.OwnerReference{APIVersion: esv1.GroupVersion.String(), Kind: "ExternalSecret", Name: "app", UID: "es-uid", Controller: new(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "cm-uid"}
	big := strings.Repeat("x", SecretMetadataBound)
	esos := map[string]string{
		esv1.AnnotationManagedBy:                     "app",
		esv1.AnnotationDataHash:                      "0123456789abcdef",
		esv1.AnnotationMergedKeysPrefix + "0a1b2c3d": "a,b",
		genv2.AnnotationStates:                       "state-1,state-2",
	}
	cases := map[string]struct {
		meta            metav1.ObjectMeta
		wantAnnotations map[string]string
		wantLabels      map[string]string
		wantOwners      []metav1.OwnerReference
		wantTrimmed     bool
	}{
		"eso's metadata kept, the rest dropped": {
			meta: metav1.ObjectMeta{
				Labels:          map[string]string{esv1.LabelManaged: esv1.LabelManagedValue, "app": "web"},
				Annotations:     merge(esos, map[string]string{"kubectl.kubernetes.io/last-applied-configuration": big, "external-secrets.io/force-sync": "1"}),
				OwnerReferences: []metav1.OwnerReference{other, controller},
				Finalizers:      []string{"example.com/keep"},
				ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}},
			},
			wantLabels:      map[string]string{esv1.LabelManaged: esv1.LabelManagedValue},
			wantAnnotations: esos,
			wantOwners:      []metav1.OwnerReference{controller},
		},
		"nothing of eso's": {
			meta: metav1.ObjectMeta{Annotations: map[string]string{"a": big}, OwnerReferences: []metav1.OwnerReference{other}},
		},
		"an annotation under eso's prefix past the bound": {
			meta: metav1.ObjectMeta{
				Labels:      map[string]string{esv1.LabelManaged: esv1.LabelManagedValue},
				Annotations: merge(esos, map[string]string{"reconcile.external-secrets.io/zz-padding": big}),
			},
			wantLabels:      map[string]string{esv1.LabelManaged: esv1.LabelManagedValue},
			wantAnnotations: merge(esos, map[string]string{AnnotationCacheTrimmed: "true"}),
			wantTrimmed:     true,
		},
		"many annotations under eso's prefixes, each small": {
			meta:        metav1.ObjectMeta{Annotations: manyAnnotations(4 * SecretMetadataBound / 64)},
			wantTrimmed: true,
		},
		"the marker set by someone else is not kept": {
			meta:            metav1.ObjectMeta{Annotations: map[string]string{AnnotationCacheTrimmed: "true", esv1.AnnotationManagedBy: "app"}},
			wantAnnotations: map[string]string{esv1.AnnotationManagedBy: "app"},
		},
		"a controller reference past the bound": {
			meta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: big, Name: "n", UID: "u", Controller: new(true)}},
				Annotations: map[string]string{esv1.AnnotationManagedBy: "app"}},
			wantAnnotations: map[string]string{esv1.AnnotationManagedBy: "app", AnnotationCacheTrimmed: "true"},
			wantTrimmed:     true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.meta.Namespace, tc.meta.Name, tc.meta.UID, tc.meta.ResourceVersion = "ns", "s", types.UID("secret-uid"), "42"
			in := NewSecretMetadata()
			in.ObjectMeta = *tc.meta.DeepCopy()
			out, err := TrimSecret(in)
			if err != nil {
				t.Fatal(err)
			}
			m := out.(*metav1.PartialObjectMetadata).ObjectMeta
			if m.Namespace != "ns" || m.Name != "s" || m.UID != "secret-uid" || m.ResourceVersion != "42" {
				t.Errorf("identity lost: %s/%s %s %s", m.Namespace, m.Name, m.UID, m.ResourceVersion)
			}
			if m.ManagedFields != nil || m.Finalizers != nil {
				t.Errorf("kept managedFields %v or finalizers %v", m.ManagedFields, m.Finalizers)
			}
			if got := CacheTrimmed(&m); got != tc.wantTrimmed {
				t.Errorf("trimmed %v, want %v", got, tc.wantTrimmed)
			}
			if n := keptBytes(m); n > SecretMetadataBound {
				t.Errorf("kept %d bytes, over the bound of %d", n, SecretMetadataBound)
			}
			for k := range m.Annotations {
				if !strings.HasPrefix(k, "reconcile.external-secrets.io/") && !strings.HasPrefix(k, "generator.external-secrets.io/") {
					t.Errorf("kept annotation %s", k)
				}
			}
			if tc.wantAnnotations != nil && !equalMaps(m.Annotations, tc.wantAnnotations) {
				t.Errorf("annotations %v, want %v", m.Annotations, tc.wantAnnotations)
			}
			if !equalMaps(m.Labels, tc.wantLabels) {
				t.Errorf("labels %v, want %v", m.Labels, tc.wantLabels)
			}
			if !equality.Semantic.DeepEqual(m.OwnerReferences, tc.wantOwners) {
				t.Errorf("owners %v, want %v", m.OwnerReferences, tc.wantOwners)
			}
		})
	}
}

// TestTrimSecretDropsData: should a typed Secret reach the cache, its data
// does not stay there.
func TestTrimSecretDropsData(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}},
		Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{"k": "v"}}
	out, _ := TrimSecret(s)
	if got := out.(*corev1.Secret); got.Data != nil || got.StringData != nil || got.Labels[esv1.LabelManaged] != esv1.LabelManagedValue {
		t.Errorf("trimmed Secret %+v", got)
	}
	if out, _ := TrimSecret("tombstone"); out != "tombstone" {
		t.Errorf("other objects changed: %v", out)
	}
}

func manyAnnotations(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("generator.external-secrets.io/a-%05d", i)] = strings.Repeat("v", 32)
	}
	return m
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestTrimSecretSharesManagedLabels: Secrets whose only eso label is the
// managed one share one labels map in the cache; a copy read from the
// cache is the reader's own.
func TestTrimSecretSharesManagedLabels(t *testing.T) {
	trim := func(labels map[string]string) *metav1.PartialObjectMetadata {
		m := NewSecretMetadata()
		m.Labels = labels
		if _, err := TrimSecret(m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := trim(map[string]string{esv1.LabelManaged: esv1.LabelManagedValue, "app": "a"})
	b := trim(map[string]string{esv1.LabelManaged: esv1.LabelManagedValue})
	if len(a.Labels) != 1 || len(b.Labels) != 1 || fmt.Sprintf("%p", a.Labels) != fmt.Sprintf("%p", b.Labels) {
		t.Fatalf("labels %v and %v are not the one shared map", a.Labels, b.Labels)
	}
	c := a.DeepCopy()
	c.Labels["x"] = "y"
	if len(b.Labels) != 1 {
		t.Fatalf("changing a copy changed the cache: %v", b.Labels)
	}
	if other := trim(map[string]string{esv1.LabelManaged: "false"}); other.Labels[esv1.LabelManaged] != "false" {
		t.Fatalf("another value of the label: %v", other.Labels)
	}
}
