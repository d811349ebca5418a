package generation

import (
	"context"
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
)

func signedState(t *testing.T, s *Signer) *genv2.GeneratorState {
	t.Helper()
	st := &genv2.GeneratorState{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app-x1",
			Labels:          map[string]string{genv2.LabelExternalSecret: "app", genv2.LabelIntent: "abc"},
			Annotations:     map[string]string{genv2.AnnotationGCDelay: "5m0s"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ExternalSecret", Name: "app", UID: types.UID("uid-1")}}},
		Spec: genv2.GeneratorStateSpec{
			Generator:            genv2.GeneratorReference{APIVersion: APIVersion, Kind: KindClusterGenerator, Name: "db"},
			ProviderRef:          genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: "db", Namespace: "platform"},
			CredentialsNamespace: "platform",
			State:                &apiextensionsv1.JSON{Raw: []byte(`{"leaseID": "database/creds/app/1", "b": 1}`)},
		},
	}
	if err := s.Sign(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestProvenanceCoversWhatRevocationReads(t *testing.T) {
	s := NewSignerWithKey([]byte("0123456789abcdef0123456789abcdef"))
	if err := s.Verify(context.Background(), signedState(t, s)); err != nil {
		t.Fatalf("a state eso signed does not verify: %v", err)
	}
	for name, alter := range map[string]func(*genv2.GeneratorState){
		"namespace":            func(st *genv2.GeneratorState) { st.Namespace = "team-b" },
		"credentials":          func(st *genv2.GeneratorState) { st.Spec.CredentialsNamespace = "team-b" },
		"provider namespace":   func(st *genv2.GeneratorState) { st.Spec.ProviderRef.Namespace = "team-a" },
		"provider name":        func(st *genv2.GeneratorState) { st.Spec.ProviderRef.Name = "other" },
		"provider kind":        func(st *genv2.GeneratorState) { st.Spec.ProviderRef.Kind = "Password" },
		"generator":            func(st *genv2.GeneratorState) { st.Spec.Generator.Name = "other" },
		"state":                func(st *genv2.GeneratorState) { st.Spec.State.Raw = []byte(`{"leaseID":"database/creds/other/2"}`) },
		"no state":             func(st *genv2.GeneratorState) { st.Spec.State = nil },
		"intent":               func(st *genv2.GeneratorState) { st.Labels[genv2.LabelIntent] = "def" },
		"external secret":      func(st *genv2.GeneratorState) { st.Labels[genv2.LabelExternalSecret] = "other" },
		"owner":                func(st *genv2.GeneratorState) { st.OwnerReferences[0].UID = "uid-2" },
		"gc delay":             func(st *genv2.GeneratorState) { st.Annotations[genv2.AnnotationGCDelay] = "1000h" },
		"signature removed":    func(st *genv2.GeneratorState) { delete(st.Annotations, genv2.AnnotationProvenance) },
		"signature not base64": func(st *genv2.GeneratorState) { st.Annotations[genv2.AnnotationProvenance] = "!!" },
	} {
		st := signedState(t, s)
		alter(st)
		if err := s.Verify(context.Background(), st); !errors.Is(err, ErrUnverifiedState) {
			t.Errorf("%s altered: Verify = %v, want ErrUnverifiedState", name, err)
		}
	}
	other := NewSignerWithKey([]byte("another key of thirty-two bytes!"))
	if err := other.Verify(context.Background(), signedState(t, s)); !errors.Is(err, ErrUnverifiedState) {
		t.Errorf("a state signed with another key verifies: %v", err)
	}
}

func TestProvenanceSurvivesTheAPIServersJSON(t *testing.T) {
	s := NewSignerWithKey([]byte("0123456789abcdef0123456789abcdef"))
	st := signedState(t, s)
	// The API server stores schemaless JSON with sorted keys and no spaces.
	st.Spec.State.Raw = []byte(`{"b":1,"leaseID":"database/creds/app/1"}`)
	st.Spec.GarbageCollectionDeadline = &metav1.Time{} // eso moves it freely
	if err := s.Verify(context.Background(), st); err != nil {
		t.Fatalf("re-encoded state does not verify: %v", err)
	}
}
