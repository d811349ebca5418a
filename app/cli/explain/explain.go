package explain

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/controllers/externalsecret"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/stores"
)

const explainUsage = "eso explain KIND/NAME [-n NAMESPACE] [--api-version V] [--kubeconfig FILE] [--context NAME]\n" +
	"  KIND: externalsecret|es, pushsecret|ps, secretstore|ss, clustersecretstore|css;\n" +
	"  a store kind may name its API as kubectl does: secretstore.v1.external-secrets.io/NAME"

// Explain is `eso explain KIND/NAME`: it prints the chain eso follows for
// one object, each link's state, what eso last did, when it acts next and
// what to change. It exits 0 when every link is ready, 1 when one fails or
// the object cannot be read, 2 on a usage error.
func Explain(build binary.Build, args []string, stdout, stderr io.Writer) int {
	fs, conn := newFlagSet("eso explain")
	apiVersion := &conn.apiVersion
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, explainUsage, err)
	}
	kind, qualified, name, ok := splitKindName(pos)
	if !ok {
		return usageError(stdout, stderr, fs, explainUsage, fmt.Errorf("want one KIND/NAME, got %q", strings.Join(pos, " ")))
	}
	switch {
	case qualified != "" && *apiVersion != "" && qualified != *apiVersion:
		return usageError(stdout, stderr, fs, explainUsage, fmt.Errorf("%s names apiVersion %s, --api-version %s", pos[0], qualified, *apiVersion))
	case qualified != "":
		*apiVersion = qualified
	}
	e, ok := explainers[kind]
	if !ok {
		return usageError(stdout, stderr, fs, explainUsage, fmt.Errorf("unknown kind %q", kind))
	}
	if e.apiVersion != "" && *apiVersion != "" && *apiVersion != e.apiVersion {
		return usageError(stdout, stderr, fs, explainUsage, fmt.Errorf("%s is served as %s only, not %s", kind, e.apiVersion, *apiVersion))
	}
	s, err := connect(build, *conn, false)
	if err != nil {
		fmt.Fprintln(stderr, "eso explain:", err)
		return 1
	}
	ctx, cancel := withTimeout()
	defer cancel()
	report, err := e.build(ctx, s, name, *apiVersion)
	if err != nil {
		fmt.Fprintln(stderr, "eso explain:", err)
		return 1
	}
	if err := report.Render(stdout); err != nil {
		fmt.Fprintln(stderr, "eso explain:", err)
		return 1
	}
	if report.Failing() {
		return 1
	}
	return 0
}

// explainer builds the report of one kind; apiVersion is the kind's own,
// empty for the store kinds, which eso serves under two.
type explainer struct {
	build      func(ctx context.Context, s *session, name, apiVersion string) (*Report, error)
	apiVersion string
}

// explainers are the kinds explained, by every name they are written as.
var explainers = func() map[string]explainer {
	es := explainer{explainExternalSecret, esv1.GroupVersion.String()}
	ps := explainer{explainPushSecret, esv1alpha1.GroupVersion.String()}
	ss := explainer{build: explainStore(stores.KindSecretStore)}
	css := explainer{build: explainStore(stores.KindClusterSecretStore)}
	return map[string]explainer{
		"externalsecret": es, "externalsecrets": es, "es": es,
		"pushsecret": ps, "pushsecrets": ps, "ps": ps,
		"secretstore": ss, "secretstores": ss, "ss": ss,
		"clustersecretstore": css, "clustersecretstores": css, "css": css,
	}
}()

// readObject reads what the user named; a missing object is an error that
// says where it was looked for.
func readObject(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, what string) error {
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s not found (namespace from -n, else the kubeconfig context)", what, key)
		}
		return fmt.Errorf("reading %s %s: %w", what, key, err)
	}
	return nil
}

func explainExternalSecret(ctx context.Context, s *session, name, _ string) (*Report, error) {
	var es esv1.ExternalSecret
	if err := readObject(ctx, s.client, client.ObjectKey{Namespace: s.namespace, Name: name}, &es, "ExternalSecret"); err != nil {
		return nil, err
	}
	return s.externalSecretReport(ctx, &es, time.Now()), nil
}

// externalSecretReport explains es: itself, each store it reads from, the
// Secret it writes, what eso last did and when it acts next.
func (s *session) externalSecretReport(ctx context.Context, es *esv1.ExternalSecret, now time.Time) *Report {
	conds := es.Status.Conditions
	r := &Report{Title: fmt.Sprintf("ExternalSecret %s/%s (external-secrets.io/v1)", es.Namespace, es.Name)}
	self := Link{What: "ExternalSecret " + es.Namespace + "/" + es.Name, State: conditionState(conds, esv1.ConditionReady),
		Status: conditionLine(conds, esv1.ConditionReady, es.Generation)}
	reason := conditionReason(conds, esv1.ConditionSynced)
	if c := meta.FindStatusCondition(conds, esv1.ConditionSynced); c != nil {
		self.Details = append(self.Details, conditionLine(conds, esv1.ConditionSynced, es.Generation))
	} else {
		reason = conditionReason(conds, esv1.ConditionReady)
	}
	if meta.IsStatusConditionTrue(conds, esv1.ConditionStalled) {
		self.Details = append(self.Details, "Stalled=True: retrying cannot fix this; only an edit of its spec can")
	}
	if self.State != OK {
		self.Hint = hint(externalSecretHints, reason)
	}
	r.add(self)
	for i, ref := range stores.RefsOf(es) {
		field := "a data or dataFrom entry's sourceRef"
		if i == 0 && es.Spec.SecretStoreRef != nil && ref == *es.Spec.SecretStoreRef {
			field = "spec.secretStoreRef"
		}
		s.resolveRef(ctx, r, field, ref, es.Namespace, 1)
	}
	for i, d := range es.Spec.DataFrom {
		if d.SourceRef != nil && d.SourceRef.GeneratorRef != nil {
			g := d.SourceRef.GeneratorRef
			r.Links[0].Details = append(r.Links[0].Details, fmt.Sprintf("spec.dataFrom[%d] is generated by %s %s", i, g.Kind, g.Name))
		}
	}
	r.add(s.targetLink(ctx, es))
	r.LastDid = externalSecretLastDid(es, now)
	r.Next = externalSecretNext(es, reason)
	return r
}

// targetLink is the Secret es writes: whether it exists, and eso's marks
// on it (labels and annotations, and its key names, never values).
func (s *session) targetLink(ctx context.Context, es *esv1.ExternalSecret) Link {
	name := es.TargetName()
	l := Link{Depth: 1, What: "target Secret " + es.Namespace + "/" + name}
	policy := es.Spec.Target.CreationPolicy
	if policy == esv1.CreatePolicyNone {
		l.State, l.Status = OK, "not written: creationPolicy None (the values are only rendered, e.g. for templates elsewhere)"
		return l
	}
	var secret corev1.Secret
	err := s.client.Get(ctx, client.ObjectKey{Namespace: es.Namespace, Name: name}, &secret)
	switch {
	case apierrors.IsNotFound(err):
		l.State, l.Status = Failing, "does not exist"
		if es.Status.SyncedResourceVersion == "" {
			l.State, l.Status = Unknown, "does not exist yet: eso has not synced this ExternalSecret"
		}
		if policy == esv1.CreatePolicyMerge {
			l.Hint = hint(externalSecretHints, esv1.ReasonSecretMissing)
		} else if l.State == Failing {
			l.Hint = "it is written once the chain above is ready; eso recreates a deleted target at once"
		}
		return l
	case err != nil:
		l.State, l.Status = Unknown, "cannot read it with your kubeconfig: "+shortError(err)
		return l
	}
	l.State, l.Status = OK, "exists, keys: "+keyNames(&secret)
	if secret.Labels[esv1.LabelManaged] == esv1.LabelManagedValue {
		l.Details = append(l.Details, "labelled "+esv1.LabelManaged+"="+esv1.LabelManagedValue+" (eso watches it and repairs drift)")
	} else if !es.Spec.Target.Merges() {
		l.State = Failing
		l.Details = append(l.Details, "not labelled "+esv1.LabelManaged+"="+esv1.LabelManagedValue+": eso has not written it")
		l.Hint = hint(externalSecretHints, conditionReason(es.Status.Conditions, esv1.ConditionSynced))
	}
	if by := secret.Annotations[esv1.AnnotationManagedBy]; by != "" {
		l.Details = append(l.Details, esv1.AnnotationManagedBy+": "+by)
	}
	if _, ok := secret.Annotations[esv1.AnnotationDataHash]; ok {
		l.Details = append(l.Details, "carries eso's data hash ("+esv1.AnnotationDataHash+"), to spot edits made behind eso's back")
	}
	for _, o := range secret.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			l.Details = append(l.Details, fmt.Sprintf("owned by %s %s (deleted with it)", o.Kind, o.Name))
		}
	}
	return l
}

func externalSecretLastDid(es *esv1.ExternalSecret, now time.Time) []string {
	st := es.Status
	wrote := "last wrote the target Secret: " + when(st.RefreshTime, now)
	if !st.RefreshTime.IsZero() {
		wrote += " (a refresh that finds nothing changed writes nothing)"
	}
	lines := []string{wrote}
	switch {
	case st.SyncedResourceVersion == "":
		lines = append(lines, "has not synced any generation of this ExternalSecret yet")
	case st.SyncedResourceVersion != externalsecret.SyncedVersion(es):
		synced, _, _ := strings.Cut(st.SyncedResourceVersion, "-")
		lines = append(lines, fmt.Sprintf("last synced generation %s; the ExternalSecret is at generation %d, or its labels or annotations changed since: its latest edit is not synced yet",
			synced, es.Generation))
	default:
		lines = append(lines, fmt.Sprintf("synced the current generation (%d) and metadata (syncedResourceVersion %s)", es.Generation, st.SyncedResourceVersion))
	}
	if t := readyTime(st.Conditions, esv1.ConditionReady); !t.IsZero() {
		lines = append(lines, "Ready last changed: "+when(t, now))
	}
	return lines
}

// externalSecretNext says when eso acts on es next, from its refresh
// settings and, while it fails, from how the failure is retried.
func externalSecretNext(es *esv1.ExternalSecret, reason string) []string {
	var lines []string
	interval := time.Hour // the CRD's default
	if es.Spec.RefreshInterval != nil {
		interval = es.Spec.RefreshInterval.Duration
	}
	switch policy := es.Spec.RefreshPolicy; {
	case policy == esv1.RefreshPolicyCreatedOnce:
		lines = append(lines, "refreshPolicy CreatedOnce: eso only creates the Secret and never updates it; delete the Secret to have it written anew")
	case policy == esv1.RefreshPolicyOnChange || interval == 0:
		lines = append(lines, "no periodic refresh (refreshPolicy OnChange or refreshInterval 0): eso reads the provider again only when the ExternalSecret changes")
	default:
		lines = append(lines, fmt.Sprintf("refreshPolicy Periodic: eso reads the provider again every %s (refreshInterval)", interval))
		if es.Spec.SyncWindows != nil {
			lines = append(lines, "periodic refreshes run only inside spec.syncWindows; an edit or a missing Secret syncs at once regardless")
		}
	}
	switch reason {
	case esv1.ReasonStoreNotFound, esv1.ReasonStoreNotReady, esv1.ReasonStoreNotAllowed, esv1.ReasonProviderError, esv1.ReasonUnsupportedStore:
		lines = append(lines, "while it fails: at once when the store or its provider configuration changes (eso watches them)")
	case esv1.ReasonSecretSyncedError:
		lines = append(lines, fmt.Sprintf("while it fails: retried with backoff, at least every %s", outcomes.MaxBackoff))
	case esv1.ReasonTemplateError, esv1.ReasonSecretNotFound:
		lines = append(lines, fmt.Sprintf("while it fails: retried when it changes, or within %s when a templateFrom source is missing", outcomes.RecheckInterval))
	}
	lines = append(lines, "now: kubectl annotate externalsecret -n "+es.Namespace+" "+es.Name+" "+esv1.AnnotationForceSync+"=$(date +%s) --overwrite")
	return lines
}

func explainPushSecret(ctx context.Context, s *session, name, _ string) (*Report, error) {
	var ps esv1alpha1.PushSecret
	if err := readObject(ctx, s.client, client.ObjectKey{Namespace: s.namespace, Name: name}, &ps, "PushSecret"); err != nil {
		return nil, err
	}
	return s.pushSecretReport(ctx, &ps, time.Now()), nil
}

// pushSecretReport explains ps: itself, the Secret it pushes, each store it
// pushes to, what eso last did and when it acts next.
func (s *session) pushSecretReport(ctx context.Context, ps *esv1alpha1.PushSecret, now time.Time) *Report {
	conds := ps.Status.Conditions
	r := &Report{Title: fmt.Sprintf("PushSecret %s/%s (external-secrets.io/v1alpha1)", ps.Namespace, ps.Name)}
	self := Link{What: "PushSecret " + ps.Namespace + "/" + ps.Name, State: conditionState(conds, esv1alpha1.ConditionReady),
		Status: conditionLine(conds, esv1alpha1.ConditionReady, ps.Generation)}
	if self.State != OK {
		self.Hint = hint(pushSecretHints, conditionReason(conds, esv1alpha1.ConditionReady))
	}
	r.add(self)
	r.add(s.sourceLink(ctx, ps))
	for i, ref := range ps.Spec.SecretStoreRefs {
		field := fmt.Sprintf("spec.secretStoreRefs[%d]", i)
		if ref.LabelSelector == nil {
			s.resolveRef(ctx, r, field, esv1.SecretStoreRef{Name: ref.Name, Kind: ref.Kind, APIVersion: ref.APIVersion}, ps.Namespace, 1)
			continue
		}
		kind := ref.Kind
		if kind == "" {
			kind = stores.KindSecretStore
		}
		sel, err := metav1.LabelSelectorAsSelector(ref.LabelSelector)
		var found []*stores.Store
		if err == nil {
			found, err = s.resolver.Select(ctx, ref.APIVersion, kind, ps.Namespace, sel)
		}
		if err != nil || len(found) == 0 {
			l := Link{Depth: 1, What: kind + "s selected by " + field + ".labelSelector", State: Failing, Status: "none matches"}
			if err != nil {
				l.Status = err.Error()
			}
			l.Hint = "label a store to match, or fix the selector"
			r.add(l)
			continue
		}
		for _, st := range found {
			s.storeChain(ctx, r, st, 1, ps.Namespace, field+" selects it by labels "+metav1.FormatLabelSelector(ref.LabelSelector))
		}
	}
	r.LastDid = []string{"last checked the remote secrets and found them as they should be: " + when(ps.Status.RefreshTime, now)}
	if v := ps.Status.SyncedResourceVersion; v != "" {
		r.LastDid = append(r.LastDid, "last pushed "+v+" (the PushSecret's generation and its source's resourceVersion)")
	}
	var pushed []string
	for store, keys := range ps.Status.SyncedPushSecrets {
		pushed = append(pushed, fmt.Sprintf("%s: %d remote secret(s)", store, len(keys)))
	}
	slices.Sort(pushed)
	r.LastDid = append(r.LastDid, pushed...)
	interval := time.Hour
	if ps.Spec.RefreshInterval != nil {
		interval = ps.Spec.RefreshInterval.Duration
	}
	if interval == 0 {
		r.Next = []string{"refreshInterval 0: eso pushes only when the PushSecret or its source Secret changes"}
	} else {
		r.Next = []string{fmt.Sprintf("eso checks and repairs the remote secrets every %s (refreshInterval); a change of the source Secret is pushed at once", interval)}
	}
	return r
}

// sourceLink is what ps pushes: one Secret, the Secrets a selector picks,
// or a generated value.
func (s *session) sourceLink(ctx context.Context, ps *esv1alpha1.PushSecret) Link {
	sel := ps.Spec.Selector
	l := Link{Depth: 1}
	switch {
	case sel.GeneratorRef != nil:
		l.What, l.State, l.Status = "generated by "+sel.GeneratorRef.Kind+" "+sel.GeneratorRef.Name, Unknown, "generated once and kept"
	case sel.Secret != nil && sel.Secret.Name != "":
		l.What = "source Secret " + ps.Namespace + "/" + sel.Secret.Name
		var secret corev1.Secret
		err := s.client.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: sel.Secret.Name}, &secret)
		switch {
		case apierrors.IsNotFound(err):
			l.State, l.Status, l.Hint = Failing, "does not exist", hint(pushSecretHints, esv1alpha1.ReasonSourceDeleted)
		case err != nil:
			l.State, l.Status = Unknown, "cannot read it with your kubeconfig: "+shortError(err)
		default:
			l.State, l.Status = OK, "exists, keys: "+keyNames(&secret)
		}
	case sel.Secret != nil && sel.Secret.Selector != nil:
		l.What = "source Secrets of " + ps.Namespace + " selected by spec.selector.secret.selector"
		// Names only: the Secrets are listed as metadata, without their data.
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		ls, err := metav1.LabelSelectorAsSelector(sel.Secret.Selector)
		if err == nil {
			err = s.client.List(ctx, &list, client.InNamespace(ps.Namespace), client.MatchingLabelsSelector{Selector: ls})
		}
		switch {
		case err != nil:
			l.State, l.Status = Unknown, "cannot list them: "+shortError(err)
		case len(list.Items) == 0:
			l.State, l.Status, l.Hint = Failing, "none matches", "label the Secrets to push, or fix the selector"
		default:
			var names []string
			for _, it := range list.Items {
				names = append(names, it.Name)
			}
			l.State, l.Status = OK, fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", "))
		}
	default:
		l.What, l.State, l.Status = "source", Unknown, "spec.selector names nothing"
	}
	return l
}

// explainStore explains a store of kind: itself, its provider
// configuration and credentials, and when eso validates it next.
func explainStore(kind string) func(context.Context, *session, string, string) (*Report, error) {
	return func(ctx context.Context, s *session, name, apiVersion string) (*Report, error) {
		ref := esv1.SecretStoreRef{Name: name, Kind: kind, APIVersion: apiVersion}
		namespace := s.namespace
		if kind == stores.KindClusterSecretStore {
			namespace = ""
		}
		st, err := s.resolver.Get(ctx, namespace, ref)
		if err != nil {
			return nil, err
		}
		r := &Report{Title: storeName(st)}
		s.storeChain(ctx, r, st, 0, "", resolution("the name given", ref, st))
		if c := meta.FindStatusCondition(st.Status.Conditions, ssv2.ConditionReady); c != nil {
			r.LastDid = []string{"last validated it with a new verdict: " + when(c.LastTransitionTime, time.Now())}
		}
		interval := 5 * time.Minute
		if st.Spec.RefreshInterval != nil {
			interval = st.Spec.RefreshInterval.Duration
		}
		every := fmt.Sprintf("every %s (spec.refreshInterval)", interval)
		if interval == 0 {
			every = "not periodically (spec.refreshInterval 0)"
		}
		r.Next = []string{fmt.Sprintf("eso validates it again %s, at once when it or its provider configuration changes, "+
			"and within %s while its credentials are missing or refused", every, outcomes.RecheckInterval),
			"now, from here: eso check " + checkKind(kind) + " " + name + nsFlag(namespace)}
		return r, nil
	}
}

func checkKind(kind string) string {
	if kind == stores.KindClusterSecretStore {
		return "clusterstore"
	}
	return "store"
}

func nsFlag(namespace string) string {
	if namespace == "" {
		return ""
	}
	return " -n " + namespace
}
