package generation

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
)

// A GeneratorState lives in a tenant's namespace, and a tenant can create
// one by hand. Revoking a state runs its generator with the credentials the
// state names, so eso acts only on states it can prove it wrote itself: each
// state carries an HMAC, made with a key only eso holds, over everything
// revocation and rotation read from it. A forged or altered state fails the
// check and is never used.

// StateKeySecret is the Secret, in eso's own namespace, holding the key that
// signs GeneratorStates. eso creates it when it is missing; deleting it makes
// every existing state unverifiable (their values are then not revoked).
const StateKeySecret = "eso-generator-state-key"

const stateKeyField = "key"

// ErrUnverifiedState: a GeneratorState eso cannot prove it wrote.
var ErrUnverifiedState = errors.New("generator state not signed by this eso")

// Signer signs and verifies GeneratorStates with the key kept in the
// StateKeySecret of one namespace, loaded (or created) on first use.
type Signer struct {
	// Client creates the key Secret; Reader reads it, uncached.
	Client    client.Client
	Reader    client.Reader
	Namespace string

	mu  sync.Mutex
	key []byte
}

// NewSignerWithKey signs with key (tests).
func NewSignerWithKey(key []byte) *Signer { return &Signer{key: key} }

func (s *Signer) loadKey(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	if s.Namespace == "" {
		return nil, errors.New("no namespace for the generator state key: set --system-namespace")
	}
	key := client.ObjectKey{Namespace: s.Namespace, Name: StateKeySecret}
	var secret corev1.Secret
	err := s.Reader.Get(ctx, key, &secret)
	if apierrors.IsNotFound(err) {
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return nil, err
		}
		secret = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: StateKeySecret},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{stateKeyField: fresh},
		}
		err = s.Client.Create(ctx, &secret)
		if apierrors.IsAlreadyExists(err) { // another replica was first
			err = s.Reader.Get(ctx, key, &secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the generator state key %s: %w", key, err)
	}
	if len(secret.Data[stateKeyField]) < 32 {
		return nil, fmt.Errorf("the generator state key %s has no %q of at least 32 bytes", key, stateKeyField)
	}
	s.key = secret.Data[stateKeyField]
	return s.key, nil
}

// Sign sets st's provenance annotation. Call it once st is complete, before
// it is created.
func (s *Signer) Sign(ctx context.Context, st *genv2.GeneratorState) error {
	key, err := s.loadKey(ctx)
	if err != nil {
		return err
	}
	if st.Annotations == nil {
		st.Annotations = map[string]string{}
	}
	st.Annotations[genv2.AnnotationProvenance] = mac(key, st)
	return nil
}

// Verify returns ErrUnverifiedState unless st carries eso's provenance for
// exactly what it says now.
func (s *Signer) Verify(ctx context.Context, st *genv2.GeneratorState) error {
	key, err := s.loadKey(ctx)
	if err != nil {
		return err
	}
	got, err := base64.RawURLEncoding.DecodeString(st.Annotations[genv2.AnnotationProvenance])
	if err != nil || len(got) == 0 {
		return fmt.Errorf("%w: no valid %s annotation", ErrUnverifiedState, genv2.AnnotationProvenance)
	}
	want, _ := base64.RawURLEncoding.DecodeString(mac(key, st))
	if !hmac.Equal(got, want) {
		return fmt.Errorf("%w: its namespace, owner, generator, configuration, credentials namespace or state differ from what eso recorded", ErrUnverifiedState)
	}
	return nil
}

// signedFields are what the MAC covers: everything that decides which
// generator revokes with which credentials, what it revokes, and which
// rotation the state belongs to. The deadline is left out: eso moves it, and
// changing it only changes when a tenant's own value is revoked.
type signedFields struct {
	Version        int                      `json:"v"`
	Namespace      string                   `json:"ns"`
	ExternalSecret string                   `json:"es"`
	Intent         string                   `json:"intent"`
	Owners         []string                 `json:"owners"`
	Generator      genv2.GeneratorReference `json:"generator"`
	ProviderRef    genv2.ProviderRef        `json:"providerRef"`
	Credentials    string                   `json:"credentialsNamespace"`
	State          []byte                   `json:"state"`
	GCDelay        string                   `json:"gcDelay"`
}

func mac(key []byte, st *genv2.GeneratorState) string {
	f := signedFields{
		Version:        1,
		Namespace:      st.Namespace,
		ExternalSecret: st.Labels[genv2.LabelExternalSecret],
		Intent:         st.Labels[genv2.LabelIntent],
		Generator:      st.Spec.Generator,
		ProviderRef:    st.Spec.ProviderRef,
		Credentials:    st.Spec.CredentialsNamespace,
		GCDelay:        st.Annotations[genv2.AnnotationGCDelay],
	}
	for _, o := range st.OwnerReferences {
		f.Owners = append(f.Owners, o.Kind+"/"+o.Name+"/"+string(o.UID))
	}
	if st.Spec.State != nil {
		f.State = canonicalJSON(st.Spec.State.Raw)
	}
	msg, err := json.Marshal(f)
	if err != nil {
		panic(err) // plain fields always marshal
	}
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-encodes raw with sorted keys and no spaces, as the API
// server stores it, so a state signed before it was created verifies as read
// back. Raw that is not JSON is signed as it is.
func canonicalJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}
