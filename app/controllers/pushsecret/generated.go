package pushsecret

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
)

// A PushSecret with selector.generatorRef pushes one generated value and
// keeps it: the value is generated once and kept in a Secret eso creates
// for it (generatedName), owned by the PushSecret, which is then pushed like
// any source. A crash after generating and before that Secret exists loses
// a value nothing has seen; after, the kept value is pushed. Deleting the
// Secret rotates the value. Generators whose values must be revoked later
// (they hand out a state, e.g. a Vault lease) are refused: GeneratorStates
// track ExternalSecrets only so far.

// generatedName is the Secret keeping a PushSecret's generated value:
// "<name>-generated", or for names too long for that, a prefix and a digest.
func generatedName(ps *esv1alpha1.PushSecret) string {
	const suffix = "-generated"
	if len(ps.Name)+len(suffix) <= 253 {
		return ps.Name + suffix
	}
	sum := sha256.Sum256([]byte(ps.Name))
	return ps.Name[:253-len(suffix)-17] + "-" + hex.EncodeToString(sum[:])[:16] + suffix
}

var errStatefulGenerator = errors.New("generator not served for PushSecrets")

// generated returns the Secret holding the PushSecret's generated value,
// generating it first when there is none.
func (r *Reconciler) generated(ctx context.Context, ps *esv1alpha1.PushSecret) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: ps.Namespace, Name: generatedName(ps)}
	var kept corev1.Secret
	err := r.APIReader.Get(ctx, key, &kept)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(&kept, ps) {
			return nil, fmt.Errorf("%w: Secret %s exists and is not this PushSecret's generated value", errBadEntry, key.Name)
		}
		return &kept, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	if r.Generators == nil {
		return nil, fmt.Errorf("%w: selector.generatorRef: no generators in this eso", errBadEntry)
	}
	res, ours, err := r.Generators.Resolve(ctx, ps.Namespace, *ps.Spec.Selector.GeneratorRef)
	if err == nil && !ours {
		err = fmt.Errorf("%w: the generator belongs to another controller class", errBadEntry)
	}
	if err != nil {
		return nil, fmt.Errorf("selector.generatorRef: %w", err)
	}
	values, state, err := res.Generator.Generate(ctx, res.Ref, res.Scope)
	if err != nil {
		return nil, fmt.Errorf("selector.generatorRef: generating with %s %s/%s: %w", res.Ref.Kind, res.Ref.Namespace, res.Ref.Name, err)
	}
	if len(state) > 0 {
		// Nothing would revoke this value later: revoke it now.
		_ = res.Generator.Cleanup(context.WithoutCancel(ctx), res.Ref, res.Scope, state)
		return nil, fmt.Errorf("%w: %s hands out values that must be revoked, which PushSecrets cannot track yet", errStatefulGenerator, res.Ref.Kind)
	}
	kept = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Type: corev1.SecretTypeOpaque, Data: values}
	if err := controllerutil.SetControllerReference(ps, &kept, r.Client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, &kept); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("keeping the generated value: %w", err) // another reconcile won: retry and read it
		}
		return nil, err
	}
	return &kept, nil
}
