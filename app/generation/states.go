package generation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// PendingGrace is how long a state recorded for a rotation that never reached
// its target Secret (the sync failed, or eso stopped in between) is kept
// before its value is revoked.
const PendingGrace = 10 * time.Minute

// Runner generates the values of an ExternalSecret's generator entries and
// keeps their GeneratorStates. The order of a rotation is what makes it safe:
//
//  1. generate, and record each value's state with a deadline (pending);
//  2. the caller writes the target Secret, listing the states it now holds
//     in its generator.external-secrets.io/states annotation;
//  3. Commit clears the new states' deadlines (in use) and starts the
//     deadlines of the states the target held before (replaced).
//
// A state is revoked only after its deadline and only if no target lists it,
// so a crash anywhere leaves neither a revoked value in use nor an untracked
// one: a pending state that reached the target is committed on the next
// reconcile; one that did not is revoked after PendingGrace.
type Runner struct {
	Client   client.Client
	Resolver *Resolver
	// Signer signs the states Runner records and verifies those it reads.
	Signer *Signer
	// PendingGrace overrides the package default (tests).
	PendingGrace time.Duration
}

// Rotation is what one sync generated.
type Rotation struct {
	// Values by dataFrom index.
	Values map[int]map[string][]byte
	// States are the GeneratorStates recorded for the values, pending until
	// Commit.
	States []string
}

// Generated is the values by dataFrom index; none without a rotation.
func (rot *Rotation) Generated() map[int]map[string][]byte {
	if rot == nil {
		return nil
	}
	return rot.Values
}

// Annotate lists the rotation's states on the target Secret about to be
// written, so that they count as in use from the moment it is.
func (rot *Rotation) Annotate(out *secrettemplate.Result) {
	if rot == nil || len(rot.States) == 0 {
		return
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[genv2.AnnotationStates] = strings.Join(rot.States, ",")
}

// HasGenerators reports whether any dataFrom entry uses a generator.
func HasGenerators(es *esv1.ExternalSecret) bool {
	return slices.ContainsFunc(es.Spec.DataFrom, isGenerated)
}

func isGenerated(df esv1.ExternalSecretDataFromRemoteRef) bool {
	return df.SourceRef != nil && df.SourceRef.GeneratorRef != nil
}

// Intent identifies the rotation an ExternalSecret is due for: the object,
// its generation and the time of its last successful sync. It changes once a
// rotation was recorded in the status, or when the spec changes.
func Intent(es *esv1.ExternalSecret) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%d/%s", es.UID, es.Generation, es.Status.RefreshTime.UTC().Format(time.RFC3339Nano))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// TargetStates lists the GeneratorStates a target Secret holds values of.
func TargetStates(target *corev1.Secret) []string {
	if target == nil || target.Annotations[genv2.AnnotationStates] == "" {
		return nil
	}
	return strings.Split(target.Annotations[genv2.AnnotationStates], ",")
}

// Completed reports whether target already holds the rotation es is due for:
// eso wrote it and stopped before recording the sync. It returns when that
// rotation was made, and commits the rotation's states on the way.
func (r *Runner) Completed(ctx context.Context, es *esv1.ExternalSecret, target *corev1.Secret) (bool, time.Time, error) {
	held := TargetStates(target)
	if len(held) == 0 {
		return false, time.Time{}, nil
	}
	intent := Intent(es)
	var at time.Time
	for _, name := range held {
		var st genv2.GeneratorState
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: es.Namespace, Name: name}, &st)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, time.Time{}, err
		}
		if st.Labels[genv2.LabelIntent] != intent {
			return false, time.Time{}, nil
		}
		if err := r.Signer.Verify(ctx, &st); err != nil {
			// Not eso's: a hand-made state must not stop a rotation.
			return false, time.Time{}, client.IgnoreNotFound(ignoreUnverified(err))
		}
		at = st.CreationTimestamp.Time
	}
	if at.IsZero() {
		return false, time.Time{}, nil
	}
	return true, at, r.Commit(ctx, es, &Rotation{States: held}, nil)
}

// Ours reports whether every generator entry of es is this eso's class:
// an ExternalSecret whose generator belongs to another eso is left to that
// eso, as one whose store does. An entry that does not resolve yet counts
// as ours, so its error is reported by the sync.
func (r *Runner) Ours(ctx context.Context, es *esv1.ExternalSecret) bool {
	for _, df := range es.Spec.DataFrom {
		if !isGenerated(df) {
			continue
		}
		if _, ours, err := r.Resolver.Resolve(ctx, es.Namespace, *df.SourceRef.GeneratorRef); err == nil && !ours {
			return false
		}
	}
	return true
}

// Generate runs every generator entry of es and records the states of what
// they made, pending, before returning any value.
func (r *Runner) Generate(ctx context.Context, es *esv1.ExternalSecret) (*Rotation, error) {
	rot := &Rotation{Values: map[int]map[string][]byte{}}
	intent := Intent(es)
	for i, df := range es.Spec.DataFrom {
		if !isGenerated(df) {
			continue
		}
		res, ours, err := r.Resolver.Resolve(ctx, es.Namespace, *df.SourceRef.GeneratorRef)
		if err == nil && !ours {
			err = fmt.Errorf("%w: the generator belongs to another controller class", errOtherClass)
		}
		if err != nil {
			return rot, fmt.Errorf("dataFrom[%d]: %w", i, err)
		}
		values, state, err := res.Generator.Generate(ctx, res.Ref, res.Scope)
		if err != nil {
			return rot, fmt.Errorf("dataFrom[%d]: generating with %s %s/%s: %w", i, res.Ref.Kind, res.Ref.Namespace, res.Ref.Name, err)
		}
		if res.StatePolicy == genv2.StateTrack {
			name, err := r.record(ctx, es, res, intent, state)
			if err != nil {
				// Nothing will track this value: revoke it now rather than leak it.
				_ = res.Generator.Cleanup(context.WithoutCancel(ctx), res.Ref, res.Scope, state)
				return rot, fmt.Errorf("dataFrom[%d]: recording the generator state: %w", i, err)
			}
			rot.States = append(rot.States, name)
		}
		rot.Values[i] = values
	}
	return rot, nil
}

var errOtherClass = errors.New("generator not served by this eso")

// ignoreUnverified drops ErrUnverifiedState, keeping errors reading the key.
func ignoreUnverified(err error) error {
	if errors.Is(err, ErrUnverifiedState) {
		return nil
	}
	return err
}

// record creates the pending GeneratorState of one generated value.
func (r *Runner) record(ctx context.Context, es *esv1.ExternalSecret, res *Resolved, intent string, state []byte) (string, error) {
	st := &genv2.GeneratorState{}
	if res.StatePatch != nil {
		if err := applyPatch(st, res.StatePatch); err != nil {
			return "", err
		}
	}
	st.GenerateName = generateName(es.Name)
	st.Namespace = es.Namespace
	if st.Labels == nil {
		st.Labels = map[string]string{}
	}
	st.Labels[genv2.LabelExternalSecret] = es.Name
	st.Labels[genv2.LabelIntent] = intent
	if st.Annotations == nil {
		st.Annotations = map[string]string{}
	}
	st.Annotations[genv2.AnnotationGCDelay] = res.GCDeadline.String()
	st.Finalizers = []string{genv2.FinalizerCleanup}
	st.OwnerReferences = []metav1.OwnerReference{{APIVersion: esv1.GroupVersion.String(), Kind: "ExternalSecret",
		Name: es.Name, UID: es.UID, BlockOwnerDeletion: ptr.To(true)}}
	st.Spec = genv2.GeneratorStateSpec{
		Generator:                 res.Source,
		ProviderRef:               genv2.ProviderRef{Kind: res.Ref.Kind, Name: res.Ref.Name, Namespace: res.Ref.Namespace},
		CredentialsNamespace:      res.Scope.Namespace,
		GarbageCollectionDeadline: ptr.To(metav1.NewTime(time.Now().Add(r.grace()))),
	}
	if len(state) > 0 {
		st.Spec.State = &apiextensionsv1.JSON{Raw: state}
	}
	if err := r.Signer.Sign(ctx, st); err != nil {
		return "", err
	}
	if err := r.Client.Create(ctx, st); err != nil {
		return "", err
	}
	return st.Name, nil
}

// applyPatch applies a stateSpec.statePatch (a JSON merge patch) to st.
func applyPatch(st *genv2.GeneratorState, patch *apiextensionsv1.JSON) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	patched, err := jsonpatch.MergePatch(raw, patch.Raw)
	if err != nil {
		return fmt.Errorf("applying stateSpec.statePatch: %w", err)
	}
	return json.Unmarshal(patched, st)
}

// generateName keeps GeneratorState names within the limit whatever the
// ExternalSecret's name.
func generateName(esName string) string {
	const max = 200
	if len(esName) > max {
		esName = esName[:max]
	}
	return esName + "-"
}

// Commit runs after the target Secret was written with rot's states: they are
// in use now, and the previous states (those the target held before) are
// replaced and get their garbage-collection deadline.
func (r *Runner) Commit(ctx context.Context, es *esv1.ExternalSecret, rot *Rotation, previous []string) error {
	var errs []error
	for _, name := range rot.States {
		errs = append(errs, r.setDeadline(ctx, es.Namespace, name, nil))
	}
	for _, name := range previous {
		if slices.Contains(rot.States, name) {
			continue
		}
		errs = append(errs, r.replaced(ctx, es.Namespace, name))
	}
	return errors.Join(errs...)
}

// replaced starts the deadline of a state whose value was replaced, with
// the delay its generator configured when it was made.
func (r *Runner) replaced(ctx context.Context, namespace, name string) error {
	var st genv2.GeneratorState
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &st); err != nil {
		return client.IgnoreNotFound(err)
	}
	if st.Spec.GarbageCollectionDeadline != nil {
		return nil // already replaced or pending
	}
	delay, err := time.ParseDuration(st.Annotations[genv2.AnnotationGCDelay])
	if err != nil {
		delay = defaultGCDeadline // a state recorded without it
	}
	return r.setDeadline(ctx, namespace, name, ptr.To(metav1.NewTime(time.Now().Add(delay))))
}

// setDeadline patches a state's deadline by name, without reading it first:
// a state created a moment ago may not be in the cache yet.
func (r *Runner) setDeadline(ctx context.Context, namespace, name string, deadline *metav1.Time) error {
	value, err := json.Marshal(deadline)
	if err != nil {
		return err
	}
	patch := fmt.Appendf(nil, `{"spec":{"garbageCollectionDeadline":%s}}`, value)
	st := &genv2.GeneratorState{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	return client.IgnoreNotFound(r.Client.Patch(ctx, st, client.RawPatch(types.MergePatchType, patch)))
}

func (r *Runner) grace() time.Duration {
	if r.PendingGrace > 0 {
		return r.PendingGrace
	}
	return PendingGrace
}
