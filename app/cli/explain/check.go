package explain

import (
	"fmt"
	"io"
	"strings"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/controllers/secretstore"
	"github.com/eso-dev/eso/app/stores"
)

const checkUsage = "eso check store NAME [-n NAMESPACE] | eso check clusterstore NAME  [--api-version V] [--kubeconfig FILE] [--context NAME]"

// Check is `eso check store NAME` and `eso check clusterstore NAME`: it
// validates the store's provider configuration and credentials once, with
// the store controller's own steps and the providers compiled into this
// binary, reading the credentials with the user's kubeconfig. It prints the
// verdict and exits 0 when the store is valid, 1 when it is not (or the
// store cannot be read), 2 on a usage error or a store it cannot check
// from here.
func Check(build binary.Build, args []string, stdout, stderr io.Writer) int {
	fs, conn := newFlagSet("eso check")
	apiVersion := &conn.apiVersion
	ambient := fs.Bool("allow-ambient-credentials", false, "let configurations without auth use your own cloud identity, as eso's flag of that name lets them use eso's")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, checkUsage, err)
	}
	if len(pos) == 1 && strings.Contains(pos[0], "/") {
		pos = strings.SplitN(pos[0], "/", 2)
	}
	if len(pos) != 2 || pos[1] == "" {
		return usageError(stdout, stderr, fs, checkUsage, fmt.Errorf("want store NAME or clusterstore NAME, got %q", strings.Join(pos, " ")))
	}
	ref := esv1.SecretStoreRef{Name: pos[1], APIVersion: *apiVersion}
	namespace := ""
	switch strings.ToLower(pos[0]) {
	case "store", "secretstore", "ss":
		ref.Kind = stores.KindSecretStore
	case "clusterstore", "clustersecretstore", "css":
		ref.Kind = stores.KindClusterSecretStore
	default:
		return usageError(stdout, stderr, fs, checkUsage, fmt.Errorf("unknown kind %q", pos[0]))
	}
	s, err := connect(build, *conn, *ambient)
	if err != nil {
		fmt.Fprintln(stderr, "eso check:", err)
		return 1
	}
	if ref.Kind == stores.KindSecretStore {
		namespace = s.namespace
	}
	ctx, cancel := withTimeout()
	defer cancel()
	st, err := s.resolver.Get(ctx, namespace, ref)
	if err != nil {
		fmt.Fprintln(stderr, "eso check:", err)
		return 1
	}
	fmt.Fprintln(stdout, storeName(st))
	if addr := st.Spec.ProviderConfig.Address; addr != "" {
		fmt.Fprintf(stdout, "cannot check here: its provider runs in the provider process at %s, which eso reaches over mTLS\n", addr)
		fmt.Fprintf(stdout, "eso's verdict:  %s\n", conditionLine(st.Status.Conditions, ssv2.ConditionReady, st.Generation))
		return 2
	}
	if !s.resolver.OwnsClass(st) {
		fmt.Fprintf(stderr, "eso check: note: spec.controller is %q: only an eso started with --controller-class=%q acts on it\n",
			st.Spec.Controller, st.Spec.Controller)
	}
	// The controller's own validation steps, writing nothing.
	v := (&secretstore.Reconciler{Resolver: s.resolver}).Validate(ctx, st)
	verdict := "Valid"
	switch {
	case v.Transient:
		verdict = "could not be validated"
	case !v.Valid:
		verdict = "not valid"
	}
	fmt.Fprintf(stdout, "verdict: %s\nreason:  %s\nmessage: %s\n", verdict, v.Reason, v.Message)
	if !v.Valid {
		if h := hint(storeHints, v.Reason); h != "" {
			fmt.Fprintf(stdout, "change:  %s\n", h)
		}
	}
	fmt.Fprintf(stdout, "eso's last verdict (status): %s\n", conditionLine(st.Status.Conditions, ssv2.ConditionReady, st.Generation))
	if v.Valid {
		return 0
	}
	return 1
}
