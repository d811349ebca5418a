package integration

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"software.sslmate.com/src/go-pkcs12"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/tests/testenv"
)

// The template parity table (app/secrettemplate/parity_test.go) runs
// upstream ESO's template v2 cases through eso's engine; these run one case
// of each function family, and the templateFrom behaviours, through a real
// ExternalSecret, Fake provider and API server.

// upstreamFixture reads one of upstream's template test inputs.
func upstreamFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "app", "secrettemplate", "testdata", "upstream", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// templated is an ExternalSecret reading keys (Secret key → Fake key) and
// rendering template data.
func templated(ns, name string, keys map[string]string, data map[string]string) *esv1.ExternalSecret {
	refs := map[string]esv1.ExternalSecretDataRemoteRef{}
	for k, remote := range keys {
		refs[k] = ref(remote, "")
	}
	es := externalSecret(ns, name, "SecretStore", "fake", refs)
	es.Spec.Target.Template = &esv1.ExternalSecretTemplate{Data: data}
	return es
}

func TestTemplateParityFunctionFamilies(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "tpl-parity", nil)
	f := func(name string) string { return upstreamFixture(t, name) }
	leaf, inter, root := f("foo.crt"), f("intermediate-ca.crt"), f("root-ca.crt")
	cert, key := f("gooble.crt"), f("gooble.key")
	create(t,
		fakeConfig(ns, "fake", map[string]string{
			"chain":      root + leaf + inter, // any order
			"cert":       cert,
			"key":        key,
			"bundle":     key + cert,
			"pfx":        base64.StdEncoding.EncodeToString([]byte(f("foo-nopass.pfx"))),
			"jwk":        f("jwk-ec-public.json"),
			"rsa-key":    f("rsa-pkcs8.key"),
			"rsa-data":   f("rsa-pkcs8-oaep-sha1.b64"),
			"word":       "example",
			"user":       "foo1",
			"password":   "FZ4jR;l]ON;pHKi=_'zh79P",
			"sans-cert":  f("sans.crt"),
			"truststore": cert + otherCertFor(t),
		}),
		secretStore(ns, "fake", storeSpec("Fake", "fake", "")),
	)

	pemES := templated(ns, "pem", map[string]string{"chain": "chain", "bundle": "bundle", "sans": "sans-cert"}, map[string]string{
		"leaf":         `{{ .chain | filterCertChain "leaf" }}`,
		"intermediate": `{{ .chain | filterCertChain "intermediate" }}`,
		"root":         `{{ .chain | filterCertChain "root" }}`,
		"tls.crt":      `{{ .bundle | filterPEM "certificate" }}`,
		"sans":         `{{ .sans | certSANs | join "," }}`,
	})
	p12 := templated(ns, "pkcs12", map[string]string{"pfx": "pfx", "cert": "cert", "key": "key", "ts": "truststore"}, map[string]string{
		"chain":      `{{ .pfx | pkcs12cert }}`,
		"keystore":   `{{ pemToPkcs12Pass .cert .key "pw" }}`,
		"roundtrip":  `{{ pemToPkcs12 .cert .key | b64dec | pkcs12key }}`,
		"truststore": `{{ pemTruststoreToPKCS12Pass .ts "pw" }}`,
	})
	// The archive arrives as base64 from the provider and is decoded there.
	for i := range p12.Spec.Data {
		if p12.Spec.Data[i].SecretKey == "pfx" {
			p12.Spec.Data[i].RemoteRef.DecodingStrategy = esv1.DecodingBase64
		}
	}
	jwk := templated(ns, "jwk", map[string]string{"jwk": "jwk"}, map[string]string{"pub": `{{ .jwk | jwkPublicKeyPem }}`})
	rsa := templated(ns, "rsa", map[string]string{"key": "rsa-key", "data": "rsa-data"}, map[string]string{
		"plain": `{{ .key | rsaDecrypt "RSA-OAEP" "SHA1" (.data | b64dec) }}`,
	})
	enc := templated(ns, "encodings", map[string]string{"word": "word"}, map[string]string{
		"hex": `{{ .word | sha256sum | hexdec | b64enc }}`,
	})
	htp := templated(ns, "htpasswd", map[string]string{"user": "user", "password": "password"}, map[string]string{
		"sha":    `{{ htpasswd .user .password "sha" }}`,
		"bcrypt": `{{ htpasswd .user .password "bcrypt" }}`,
	})
	create(t, pemES, p12, jwk, rsa, enc, htp)

	waitSecretData(t, ns, "pem", map[string]string{
		"leaf": leaf, "intermediate": inter, "root": root, "tls.crt": cert,
		"sans": "example.com,www.example.com,192.168.1.10,10.0.0.1,admin@example.com,https://example.com",
	})

	s := waitKeys(t, ns, "pkcs12", "chain", "keystore", "roundtrip", "truststore")
	if got := string(s.Data["chain"]); got != leaf+inter+root {
		t.Errorf("pkcs12cert did not give the chain leaf → intermediate → root")
	}
	if string(s.Data["roundtrip"]) != key {
		t.Errorf("pemToPkcs12 | b64dec | pkcs12key did not give the key back")
	}
	ks, err := base64.StdEncoding.DecodeString(string(s.Data["keystore"]))
	if err != nil {
		t.Fatalf("pemToPkcs12Pass is not base64 (upstream's encoding): %v", err)
	}
	if _, c, err := pkcs12.Decode(ks, "pw"); err != nil || string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})) != cert {
		t.Errorf("keystore: %v", err)
	}
	ts, err := base64.StdEncoding.DecodeString(string(s.Data["truststore"]))
	if err != nil {
		t.Fatalf("pemTruststoreToPKCS12Pass is not base64: %v", err)
	}
	if certs, err := pkcs12.DecodeTrustStore(ts, "pw"); err != nil || len(certs) != 2 {
		t.Errorf("truststore: %d certificates, %v", len(certs), err)
	}

	waitSecretData(t, ns, "jwk", map[string]string{"pub": f("jwk-ec-public.pem")})
	waitSecretData(t, ns, "rsa", map[string]string{"plain": "a1b2c3d4"})
	waitSecretData(t, ns, "encodings", map[string]string{"hex": "UNhY4JhezH9gQYqvDMWrWH9CwlcKiECVqejMrND2VFw="})
	h := waitKeys(t, ns, "htpasswd", "sha", "bcrypt")
	if string(h.Data["sha"]) != "foo1:{SHA}wtdJD6OIjUniEJkTlewnKzfFxA4=" {
		t.Errorf("htpasswd sha = %q", h.Data["sha"])
	}
	if b := string(h.Data["bcrypt"]); !strings.HasPrefix(b, "foo1:$2a$10$") || len(b) != len("foo1:")+60 {
		t.Errorf("htpasswd bcrypt = %q", b)
	}

	// The bcrypt salt and the archives' salts come from their input: a
	// forced sync that reads the same values writes nothing.
	for _, es := range []*esv1.ExternalSecret{p12, htp} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
			t.Fatal(err)
		}
	}
	forceSyncedUnder(t, "same input", p12, htp)
	requireUnchanged(t, s)
	requireUnchanged(t, h)
}

// TestTemplateParityTemplateFrom: templateFrom targets in any letter case,
// valuesDecodingStrategy, and Replace with a templateFrom that writes only
// annotations (the fetched data is not copied, as upstream).
func TestTemplateParityTemplateFrom(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	ns := env.Namespace(t, "tpl-parity-from", nil)
	create(t,
		fakeConfig(ns, "fake", map[string]string{"encoded": "SGVsbG8=", "plain": "kept?"}),
		secretStore(ns, "fake", storeSpec("Fake", "fake", "")),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tpl"}, Data: map[string]string{
			"greeting": "{{ .encoded }}",
		}},
	)
	keys := map[string]esv1.ExternalSecretDataRemoteRef{"encoded": ref("encoded", ""), "plain": ref("plain", "")}

	decoded := externalSecret(ns, "decoded", "SecretStore", "fake", keys)
	decoded.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
		{ConfigMap: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{{Key: "greeting"}}},
			Target: "data", ValuesDecodingStrategy: esv1.DecodingBase64},
		{Literal: ptr.To("note: '{{ .encoded }}'"), Target: "ANNOTATIONS", ValuesDecodingStrategy: esv1.DecodingAuto},
		{Literal: ptr.To("team: platform"), Target: "labels"},
	}}
	annotationsOnly := externalSecret(ns, "annotations-only", "SecretStore", "fake", keys)
	annotationsOnly.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
		{Literal: ptr.To("source: fake"), Target: esv1.TemplateTargetAnnotations},
	}}
	merged := externalSecret(ns, "merged", "SecretStore", "fake", keys)
	merged.Spec.Target.Template = &esv1.ExternalSecretTemplate{MergePolicy: esv1.MergePolicyMerge, TemplateFrom: []esv1.TemplateFrom{
		{Literal: ptr.To("source: fake"), Target: esv1.TemplateTargetAnnotations},
	}}
	create(t, decoded, annotationsOnly, merged)

	s := waitSecretData(t, ns, "decoded", map[string]string{"greeting": "Hello"})
	if s.Annotations["note"] != "Hello" || s.Labels["team"] != "platform" {
		t.Errorf("annotations %v, labels %v", s.Annotations, s.Labels)
	}
	s = waitSecretData(t, ns, "annotations-only", map[string]string{})
	if s.Annotations["source"] != "fake" {
		t.Errorf("annotations %v", s.Annotations)
	}
	waitSecretData(t, ns, "merged", map[string]string{"encoded": "SGVsbG8=", "plain": "kept?"})

	// A value that does not decode is a template error naming the key, not
	// the value.
	bad := externalSecret(ns, "bad", "SecretStore", "fake", keys)
	bad.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
		{Literal: ptr.To("x: '{{ .plain }}'"), ValuesDecodingStrategy: esv1.DecodingBase64},
	}}
	create(t, bad)
	if msg := waitReady(t, bad, metav1.ConditionFalse, esv1.ReasonTemplateError); strings.Contains(msg, "kept?") || !strings.Contains(msg, `"x"`) {
		t.Errorf("message = %q: want the key, never the value", msg)
	}

	// The schema takes the three targets in any case, as upstream, and
	// nothing else: another path would write privileged Secret fields.
	for target, ok := range map[esv1.TemplateTarget]bool{"Data": true, "labels": true, "AnNoTaTiOnS": true, "": true, "spec": false, "type": false, "metadata.ownerReferences": false} {
		es := externalSecret(ns, "schema-"+strings.ToLower(strings.NewReplacer(".", "-").Replace(string(target)))+"x", "SecretStore", "fake", keys)
		es.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("a: b"), Target: target}}}
		err := env.Client.Create(ctx, es, client.DryRunAll)
		if ok && err != nil {
			t.Errorf("target %q refused: %v", target, err)
		}
		if !ok && !apierrors.IsInvalid(err) {
			t.Errorf("target %q: %v, want refused by the schema", target, err)
		}
	}
	es := externalSecret(ns, "schema-strategy", "SecretStore", "fake", keys)
	es.Spec.Target.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("a: b"), ValuesDecodingStrategy: "Hex"}}}
	if err := env.Client.Create(ctx, es, client.DryRunAll); !apierrors.IsInvalid(err) {
		t.Errorf("valuesDecodingStrategy Hex: %v, want refused by the schema", err)
	}
}

// waitKeys waits until Secret ns/name holds exactly the given keys.
func waitKeys(t *testing.T, ns, name string, want ...string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	eventually(t, "Secret "+ns+"/"+name+" with keys "+strings.Join(want, ","), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			return err
		}
		if len(s.Data) != len(want) {
			return fmt.Errorf("has keys %v", keys(s.Data))
		}
		for _, k := range want {
			if _, ok := s.Data[k]; !ok {
				return fmt.Errorf("has keys %v", keys(s.Data))
			}
		}
		return nil
	})
	return &s
}

// otherCertFor is a second certificate for the trust store (upstream's
// pkcs12 tests use the leaf of its chain).
func otherCertFor(t *testing.T) string { return "\n" + upstreamFixture(t, "foo.crt") }
