package externalsecret

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// Errors about the target Secret.
var (
	errTargetMissing   = errors.New("creationPolicy Merge needs an existing Secret to merge into")
	errTargetConflict  = errors.New("target Secret is controlled by another owner")
	errTargetImmutable = errors.New("target Secret is immutable")
)

// readTarget returns the target Secret, or nil if it does not exist, and
// whether it was read whole. Its metadata comes from the cache, which holds
// the Secrets labelled as eso's as metadata only. The whole Secret is read
// from the API server when this process has not verified it at its cached
// resourceVersion (targetRecord), or when the cache holds only part of its
// metadata; otherwise the cached metadata, with the type recorded, is all a
// sync needs until a provider read is due (readWhole). Only Merge, whose
// target eso has not labelled yet, reads a Secret missing from the cache;
// for Owner and Orphan it is created, and found by the conflict that causes
// if it exists after all.
func (r *Reconciler) readTarget(ctx context.Context, es *esv1.ExternalSecret) (*corev1.Secret, bool, error) {
	if es.Spec.Target.CreationPolicy == esv1.CreatePolicyNone {
		return nil, true, nil
	}
	key := client.ObjectKey{Namespace: es.Namespace, Name: es.TargetName()}
	meta := manager.NewSecretMetadata()
	err := r.secretMetadata().Get(ctx, key, meta)
	switch {
	case apierrors.IsNotFound(err) && !es.Spec.Target.Merges():
		return nil, true, nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, false, fmt.Errorf("reading target Secret %s: %w", key.Name, err)
	case err == nil:
		if rec, ok := r.lastVerified(es); ok && rec.covers(es, meta) {
			return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta.ObjectMeta, Type: rec.secretType}, false, nil
		}
	}
	s, err := r.readWholeTarget(ctx, es)
	return s, true, err
}

// readWholeTarget reads the target Secret, data included, from the API
// server (nil if it does not exist) and records it if it holds what eso
// wrote.
func (r *Reconciler) readWholeTarget(ctx context.Context, es *esv1.ExternalSecret) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: es.Namespace, Name: es.TargetName()}
	var s corev1.Secret
	err := r.APIReader.Get(ctx, key, &s)
	if apierrors.IsNotFound(err) {
		r.verified.Delete(esKey(es))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading target Secret %s: %w", key.Name, err)
	}
	r.verify(es, &s)
	return &s, nil
}

// secretMetadata reads Secrets' metadata: from the cache in a running eso.
func (r *Reconciler) secretMetadata() client.Reader {
	if r.SecretMetadata != nil {
		return r.SecretMetadata
	}
	return r.Client
}

// targetRecord is what this process knows of an ExternalSecret's target: at
// resourceVersion, the Secret name with uid, of secretType, held what the
// ExternalSecret wrote, under a creation policy that merges or not. eso
// wrote it at that version, or read it whole and found it so.
type targetRecord struct {
	name, resourceVersion string
	uid                   types.UID
	secretType            corev1.SecretType
	merges                bool
	// rendered is the renderedHash of the output the target was last
	// written with, or found to hold, at this version; empty if unknown.
	rendered string
}

// covers reports whether the record vouches for meta, the target as
// cached, under the ExternalSecret's creation policy (see holds).
func (rec targetRecord) covers(es *esv1.ExternalSecret, meta metav1.Object) bool {
	return rec.holds(meta) && rec.merges == es.Spec.Target.Merges()
}

// holds reports whether meta, a Secret as cached, is the one recorded:
// same Secret, same version, and all of its eso metadata in the cache.
func (rec targetRecord) holds(meta metav1.Object) bool {
	return rec.name == meta.GetName() && rec.uid == meta.GetUID() && rec.resourceVersion == meta.GetResourceVersion() &&
		!manager.CacheTrimmed(meta)
}

func esKey(es *esv1.ExternalSecret) types.NamespacedName {
	return types.NamespacedName{Namespace: es.Namespace, Name: es.Name}
}

// lastVerified is the record of the ExternalSecret's target, if this
// process has one for this ExternalSecret (not one deleted and recreated).
func (r *Reconciler) lastVerified(es *esv1.ExternalSecret) (targetRecord, bool) {
	v, ok := r.verified.Load(esKey(es))
	if !ok {
		return targetRecord{}, false
	}
	rec := v.(verifiedTarget)
	return rec.targetRecord, rec.es == es.UID
}

// verifiedTarget is a targetRecord and the ExternalSecret it is about.
type verifiedTarget struct {
	targetRecord
	es types.UID
}

// verify records the whole Secret s as the ExternalSecret's target if it
// holds what the ExternalSecret wrote, and forgets the record otherwise.
func (r *Reconciler) verify(es *esv1.ExternalSecret, s *corev1.Secret) {
	if s == nil || s.ResourceVersion == "" || drifted(es, s) {
		r.verified.Delete(esKey(es))
		return
	}
	r.verified.Store(esKey(es), verifiedTarget{es: es.UID, targetRecord: targetRecord{name: s.Name, resourceVersion: s.ResourceVersion,
		uid: s.UID, secretType: s.Type, merges: es.Spec.Target.Merges()}})
}

// renderedHash identifies what writeTarget makes of out for es: the output
// and the spec it is applied under.
func renderedHash(es *esv1.ExternalSecret, out *secrettemplate.Result) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00", es.UID, es.Generation, es.Name, out.Type)
	h.Write([]byte(dataHash(out.Data)))
	for _, m := range []map[string]string{out.Labels, out.Annotations} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(m[k]), m[k])
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// noteRendered records that the target, as last recorded, holds what
// rendered (renderedHash) makes.
func (r *Reconciler) noteRendered(es *esv1.ExternalSecret, rendered string) {
	if v, ok := r.verified.Load(esKey(es)); ok && v.(verifiedTarget).es == es.UID {
		rec := v.(verifiedTarget)
		rec.rendered = rendered
		r.verified.Store(esKey(es), rec)
	}
}

// renderedInto reports whether the recorded target holds what rendered makes.
func (r *Reconciler) renderedInto(es *esv1.ExternalSecret, rendered string) bool {
	rec, ok := r.lastVerified(es)
	return ok && rec.rendered != "" && rec.rendered == rendered
}

// checkTarget decides whether this ExternalSecret may write the target, before
// anything is read from the provider. A Secret is written whole by at most one
// ExternalSecret; eso never takes over a Secret it did not create (deleting the
// ExternalSecret would then delete the user's Secret); Merge only adds keys to
// Secrets nobody writes whole.
func checkTarget(es *esv1.ExternalSecret, target *corev1.Secret) error {
	policy := es.Spec.Target.CreationPolicy
	if policy == esv1.CreatePolicyNone {
		return nil
	}
	if target == nil {
		if policy == esv1.CreatePolicyMerge {
			return fmt.Errorf("%w: Secret %s does not exist", errTargetMissing, es.TargetName())
		}
		return nil
	}
	owner := metav1.GetControllerOf(target)
	if owner != nil && owner.UID != es.UID {
		return fmt.Errorf("%w: Secret %s is controlled by %s %s", errTargetConflict, target.Name, owner.Kind, owner.Name)
	}
	managedBy := target.Annotations[esv1.AnnotationManagedBy]
	if managedBy != "" && managedBy != es.Name {
		return fmt.Errorf("%w: Secret %s is written by ExternalSecret %s", errTargetConflict, target.Name, managedBy)
	}
	if es.Spec.Target.Merges() {
		if credentialTypes[target.Type] {
			return fmt.Errorf("%w: Secret %s is of type %s, which Kubernetes fills with credentials; eso does not merge into it",
				errTargetConflict, target.Name, target.Type)
		}
		return nil
	}
	if managedBy == es.Name || owner != nil {
		return nil
	}
	return fmt.Errorf("%w: Secret %s exists and eso did not create it; delete it, or use creationPolicy Merge to add keys to it",
		errTargetConflict, target.Name)
}

// errInvalidTarget: the API server refused the Secret eso built (e.g. a
// templated label that is not a valid label value). Retrying sends the same.
var errInvalidTarget = errors.New("the API server refused the Secret")

// withoutValues replaces a validation error by its fields and error types:
// the API server quotes the invalid values, which may be secret.
func withoutValues(err error) error {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return err
	}
	var causes []string
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			causes = append(causes, fmt.Sprintf("%s: %s", c.Field, c.Type))
		}
	}
	return fmt.Errorf("%w: %s", errInvalidTarget, strings.Join(causes, "; "))
}

// errCredentialType: eso was asked to write a Secret type Kubernetes fills
// with credentials. Retrying asks the same.
var errCredentialType = fmt.Errorf("%w: credential Secret type", errInvalidTarget)

// credentialTypes are Secret types Kubernetes fills with credentials of its own.
var credentialTypes = map[corev1.SecretType]bool{
	corev1.SecretTypeServiceAccountToken: true,
	corev1.SecretTypeBootstrapToken:      true,
}

// drifted reports whether someone changed, since eso wrote it, the data
// this ExternalSecret is responsible for: the whole Secret it writes whole
// (Owner, Orphan), or only its own keys of a Secret it merges into
// (recorded with their digest): the owner's edits of other keys, and other
// ExternalSecrets merging into the same Secret, are not its business.
func drifted(es *esv1.ExternalSecret, target *corev1.Secret) bool {
	if target == nil || es.Spec.Target.CreationPolicy == esv1.CreatePolicyNone {
		return false
	}
	if !es.Spec.Target.Merges() {
		return !hashMatches(target.Annotations[esv1.AnnotationDataHash], target.Data)
	}
	recorded, ok := target.Annotations[mergedDigestAnnotation(es)]
	if !ok {
		return false // written before the digest was recorded: nothing to compare
	}
	return recorded != dataHash(ownKeys(es, target))
}

// ownKeys is the part of a merged Secret's data this ExternalSecret wrote.
func ownKeys(es *esv1.ExternalSecret, target *corev1.Secret) map[string][]byte {
	own := map[string][]byte{}
	for _, k := range splitKeys(target.Annotations[mergedKeysAnnotation(es)]) {
		if v, ok := target.Data[k]; ok {
			own[k] = v
		}
	}
	return own
}

// mergedDigestAnnotation records the digest of a merging ExternalSecret's
// own keys and values.
func mergedDigestAnnotation(es *esv1.ExternalSecret) string {
	return strings.Replace(mergedKeysAnnotation(es), esv1.AnnotationMergedKeysPrefix, reservedPrefix+"digest-", 1)
}

// targetValid reports whether the target needs no repair, as upstream
// decides it: an Orphan target is left to its users once written (deleted
// or edited, it stays so until the next refresh), None has none, a Merge
// target must exist, and an Owner target must exist and hold what eso
// wrote.
func targetValid(es *esv1.ExternalSecret, target *corev1.Secret) bool {
	switch es.Spec.Target.CreationPolicy {
	case esv1.CreatePolicyNone, esv1.CreatePolicyOrphan:
		return true
	}
	return target != nil && !drifted(es, target)
}

// writeTarget makes the target Secret hold data according to the creation
// policy. It writes only when something differs and reports whether it wrote.
// Callers check the target with checkTarget first. An existing target keeps its Type.
func (r *Reconciler) writeTarget(ctx context.Context, es *esv1.ExternalSecret, target *corev1.Secret, out *secrettemplate.Result) (bool, error) {
	if es.Spec.Target.CreationPolicy == esv1.CreatePolicyNone {
		return false, nil
	}
	desired, err := r.desiredTarget(es, target, out)
	if err != nil {
		return false, err
	}
	if target == nil {
		done := r.writingTarget(es, desired.Name)
		defer done("") // a failed write: what was held back is reconciled
		err := r.Client.Create(ctx, desired)
		if apierrors.IsAlreadyExists(err) {
			// Not in the cache, yet there: a Secret eso does not manage (or
			// one created a moment ago). Judge it as it is.
			var live corev1.Secret
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(desired), &live); err != nil {
				return false, fmt.Errorf("reading Secret %s: %w", desired.Name, err)
			}
			if err := checkTarget(es, &live); err != nil {
				return false, err
			}
			return r.writeTarget(ctx, es, &live, out)
		}
		if err != nil {
			return false, fmt.Errorf("creating Secret %s: %w", desired.Name, withoutValues(err))
		}
		metrics.SecretWrites.WithLabelValues("create").Inc()
		r.verify(es, desired)
		done(desired.ResourceVersion)
		return true, nil
	}
	if equality.Semantic.DeepEqual(target, desired) || (!es.Spec.Target.Merges() && adoptedAsWritten(es, target, desired)) {
		r.verify(es, target)
		return false, nil
	}
	if ptr.Deref(target.Immutable, false) && !equality.Semantic.DeepEqual(target.Data, desired.Data) {
		return false, fmt.Errorf("%w: Secret %s no longer matches the provider but cannot be changed; delete it to have it recreated",
			errTargetImmutable, target.Name)
	}
	if err := r.updateTarget(ctx, es, desired); err != nil {
		return false, err
	}
	return true, nil
}

// updateTarget writes desired over the target and records it.
func (r *Reconciler) updateTarget(ctx context.Context, es *esv1.ExternalSecret, desired *corev1.Secret) error {
	done := r.writingTarget(es, desired.Name)
	defer done("") // a failed write: what was held back is reconciled
	if err := r.Client.Update(ctx, desired); err != nil {
		return fmt.Errorf("updating Secret %s: %w", desired.Name, withoutValues(err))
	}
	metrics.SecretWrites.WithLabelValues("update").Inc()
	r.verify(es, desired)
	done(desired.ResourceVersion)
	return nil
}

// desiredTarget is the target as the ExternalSecret says it should be:
// target (nil when there is none) with out's type, metadata and data, eso's
// marks and the ownership creationPolicy asks for.
func (r *Reconciler) desiredTarget(es *esv1.ExternalSecret, target *corev1.Secret, out *secrettemplate.Result) (*corev1.Secret, error) {
	if credentialTypes[out.Type] {
		// The schema refuses such a template; this holds for objects stored
		// before it did. Kubernetes would fill the Secret with a long-lived
		// token of whatever ServiceAccount its annotation names.
		return nil, fmt.Errorf("%w: the template asks for type %s, which Kubernetes fills with credentials; eso never writes one",
			errCredentialType, out.Type)
	}
	desired := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: es.Namespace, Name: es.TargetName()}, Type: out.Type}
	if target != nil {
		desired = target.DeepCopy()
		if !es.Spec.Target.Merges() && target.Type != out.Type {
			return nil, fmt.Errorf("%w: Secret %s has type %s but the template asks for %s, and Kubernetes cannot change a Secret's type; delete it to have it recreated",
				errTargetConflict, target.Name, target.Type, out.Type)
		}
	}
	applyMetadata(es, desired, out.Labels, out.Annotations)
	if tpl := es.Spec.Target.Template; tpl != nil && desired.DeletionTimestamp.IsZero() {
		// As upstream: the template's finalizers are added while the
		// Secret is not being deleted, and never removed by eso.
		for _, f := range tpl.Metadata.Finalizers {
			controllerutil.AddFinalizer(desired, f)
		}
	}
	setData(es, desired, out.Data)
	metav1.SetMetaDataLabel(&desired.ObjectMeta, esv1.LabelManaged, esv1.LabelManagedValue)
	setDataHash(desired)
	if es.Spec.Target.CreationPolicy == esv1.CreatePolicyOwner {
		if err := controllerutil.SetControllerReference(es, desired, r.Client.Scheme()); err != nil {
			return nil, err
		}
	} else {
		// Moved off Owner: the Secret must no longer go with the
		// ExternalSecret (a Merge target is someone else's), as upstream.
		desired.OwnerReferences = slices.DeleteFunc(desired.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == es.UID })
		if len(desired.OwnerReferences) == 0 {
			desired.OwnerReferences = nil
		}
	}
	if es.Spec.Target.Immutable && target == nil {
		desired.Immutable = ptr.To(true)
	}
	return desired, nil
}

// setData puts data in desired: the whole data of a Secret the
// ExternalSecret owns, or, merged into someone else's, its keys over the
// Secret's, dropping those it wrote before and no longer produces.
func setData(es *esv1.ExternalSecret, desired *corev1.Secret, data map[string][]byte) {
	if !es.Spec.Target.Merges() {
		desired.Data = data
		metav1.SetMetaDataAnnotation(&desired.ObjectMeta, esv1.AnnotationManagedBy, es.Name)
		return
	}
	if desired.Data == nil {
		desired.Data = map[string][]byte{}
	}
	ann := mergedKeysAnnotation(es)
	for _, k := range splitKeys(desired.Annotations[ann]) {
		if _, still := data[k]; !still {
			delete(desired.Data, k)
		}
	}
	maps.Copy(desired.Data, data)
	metav1.SetMetaDataAnnotation(&desired.ObjectMeta, ann, strings.Join(slices.Sorted(maps.Keys(data)), ","))
	metav1.SetMetaDataAnnotation(&desired.ObjectMeta, mergedDigestAnnotation(es), dataHash(data))
}

// appliedMetadata is what an ExternalSecret records on its target of the
// labels and annotations it set, so that those it no longer sets are
// removed and nobody else's are.
type appliedMetadata struct {
	Labels      []string `json:"labels,omitempty"`
	Annotations []string `json:"annotations,omitempty"`
}

// metadataAnnotation is where an ExternalSecret records its appliedMetadata
// (per ExternalSecret, as Secrets are shared under creationPolicy Merge).
func metadataAnnotation(es *esv1.ExternalSecret) string {
	return strings.Replace(mergedKeysAnnotation(es), esv1.AnnotationMergedKeysPrefix, reservedPrefix+"metadata-", 1)
}

// applyMetadata sets labels and annotations on desired, removes those the
// ExternalSecret set before and no longer does, and records the new set.
func applyMetadata(es *esv1.ExternalSecret, desired *corev1.Secret, labels, annotations map[string]string) {
	ann := metadataAnnotation(es)
	var before appliedMetadata
	if raw := desired.Annotations[ann]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &before) // a record eso cannot read removes nothing
	}
	for _, k := range before.Labels {
		if _, still := labels[k]; !still {
			delete(desired.Labels, k)
		}
	}
	for _, k := range before.Annotations {
		if _, still := annotations[k]; !still {
			delete(desired.Annotations, k)
		}
	}
	for k, v := range labels {
		metav1.SetMetaDataLabel(&desired.ObjectMeta, k, v)
	}
	for k, v := range annotations {
		metav1.SetMetaDataAnnotation(&desired.ObjectMeta, k, v)
	}
	// eso's own keys (the generator states a rotation lists) are set but
	// never recorded, so they are never removed as "dropped".
	now := appliedMetadata{Labels: slices.Sorted(maps.Keys(notEsos(labels))), Annotations: slices.Sorted(maps.Keys(notEsos(annotations)))}
	if len(now.Labels)+len(now.Annotations) == 0 {
		delete(desired.Annotations, ann)
		return
	}
	raw, _ := json.Marshal(now)
	metav1.SetMetaDataAnnotation(&desired.ObjectMeta, ann, string(raw))
}

// removeKeys applies deletionPolicy Merge once the remote secrets are gone:
// the keys eso wrote leave the Secret, the Secret stays. It reports whether it
// wrote.
func (r *Reconciler) removeKeys(ctx context.Context, es *esv1.ExternalSecret, target *corev1.Secret) (bool, error) {
	if target == nil {
		return false, nil
	}
	desired := target.DeepCopy()
	if es.Spec.Target.Merges() {
		ann := mergedKeysAnnotation(es)
		for _, k := range splitKeys(desired.Annotations[ann]) {
			delete(desired.Data, k)
		}
		delete(desired.Annotations, ann)
		delete(desired.Annotations, mergedDigestAnnotation(es))
	} else {
		desired.Data = nil
	}
	setDataHash(desired)
	if equality.Semantic.DeepEqual(target, desired) {
		return false, nil
	}
	if ptr.Deref(target.Immutable, false) {
		return false, fmt.Errorf("%w: Secret %s cannot have its keys removed", errTargetImmutable, target.Name)
	}
	if err := r.updateTarget(ctx, es, desired); err != nil {
		return false, err
	}
	return true, nil
}

// mergedKeysAnnotation is where a merging ExternalSecret records its keys on
// the shared Secret (a digest keeps the annotation name short and valid).
func mergedKeysAnnotation(es *esv1.ExternalSecret) string {
	h := fnv.New32a()
	h.Write([]byte(es.Name))
	return fmt.Sprintf("%s%08x", esv1.AnnotationMergedKeysPrefix, h.Sum32())
}

func splitKeys(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// deleteRenamed deletes, as upstream, the Secret an Owner ExternalSecret
// wrote under the target name it had before (status.binding) once the new
// one is written, if it still controls it.
func (r *Reconciler) deleteRenamed(ctx context.Context, es *esv1.ExternalSecret) error {
	old := es.Status.Binding.Name
	if old == "" || old == es.TargetName() || es.Spec.Target.CreationPolicy != esv1.CreatePolicyOwner {
		return nil
	}
	// Its metadata is all it takes: the cache's, as eso labelled it.
	s := manager.NewSecretMetadata()
	if err := r.secretMetadata().Get(ctx, client.ObjectKey{Namespace: es.Namespace, Name: old}, s); err != nil {
		return client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOf(s); owner == nil || owner.UID != es.UID {
		return nil // not (or no longer) this ExternalSecret's
	}
	deleted, err := r.deleteTarget(ctx, es, s)
	if deleted {
		r.Recorder.Event(es, corev1.EventTypeNormal, esv1.ReasonSecretDeleted, "deleted Secret "+old+": the target is now "+es.TargetName())
	}
	return err
}

// deleteTarget deletes the target Secret if this ExternalSecret controls it
// (deletionPolicy Delete). It reports whether it deleted.
// target may be whole or metadata only.
func (r *Reconciler) deleteTarget(ctx context.Context, es *esv1.ExternalSecret, target client.Object) (bool, error) {
	if target == nil {
		return false, nil
	}
	owner := metav1.GetControllerOf(target)
	ours := (owner != nil && owner.UID == es.UID) || (owner == nil && target.GetAnnotations()[esv1.AnnotationManagedBy] == es.Name)
	if !ours {
		return false, nil
	}
	uid, version := target.GetUID(), target.GetResourceVersion()
	err := r.Client.Delete(ctx, target, client.Preconditions{UID: &uid, ResourceVersion: &version})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("deleting Secret %s: %w", target.GetName(), err)
	}
	if target.GetName() == es.TargetName() {
		r.verified.Delete(esKey(es))
	}
	metrics.SecretWrites.WithLabelValues("delete").Inc()
	return true, nil
}

// dataHash is a digest of a Secret's data: stable across key order, and
// unambiguous (lengths are hashed with the bytes).
func dataHash(data map[string][]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, k := range slices.Sorted(maps.Keys(data)) {
		binary.BigEndian.PutUint64(n[:], uint64(len(k)))
		h.Write(n[:])
		h.Write([]byte(k))
		binary.BigEndian.PutUint64(n[:], uint64(len(data[k])))
		h.Write(n[:])
		h.Write(data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// setDataHash records the hash of s's data. Upstream's hash of a Secret
// taken over from upstream ESO stays while it still describes the data:
// the hash changes only with the data, which is what rollout restarts read.
func setDataHash(s *corev1.Secret) {
	if h := s.Annotations[esv1.AnnotationDataHash]; len(h) == upstreamDataHashLen && h == upstreamDataHash(s.Data) {
		return
	}
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, esv1.AnnotationDataHash, dataHash(s.Data))
}
