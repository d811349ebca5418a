package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/tests/faultprovider"
	"github.com/eso-dev/eso/tests/testenv"
)

// TestValuesNeverReachStatusEventsOrLogs syncs canary values through a store
// in process and one served by a provider process, and fails each
// ExternalSecret in a way that has eso hold the value when it fails (a
// property of a value that is no JSON object, a path into a string, a
// decoding, template functions over the value). Then neither the
// ExternalSecrets' and stores' status, nor any event, nor anything eso or
// the provider process logged at --log-level=debug holds the canary, raw or in
// base64. The provider errors themselves are held to the same rule by the
// conformance suite, for every provider and both paths.
func TestValuesNeverReachStatusEventsOrLogs(t *testing.T) {
	logged := testenv.CaptureLogs(t)
	ctx := context.Background()
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	canary := "c4n4ry-" + hex.EncodeToString(suffix)

	fp := faultprovider.Start(t, providerProcess(t))
	runEso(t, testConfig())
	ns := env.Namespace(t, "canary", nil)
	local := secretStore(ns, "local", storeSpec("Fake", "values", ""))
	remote := secretStore(ns, "remote", storeSpec("Fake", "values", ""))
	remote.Spec.ProviderConfig.Address = fp.Addr()
	remote.Spec.ProviderConfig.Auth = &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "core-tls"}}
	create(t, fakeConfig(ns, "values", map[string]string{
		"plain": canary,
		"doc":   `{"token":"` + canary + `","nested":{"deep":"` + canary + `"}}`,
	}), fp.ClientSecret(t, ns, "core-tls", "eso-core"), local, remote)
	waitReady(t, local, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, remote, metav1.ConditionTrue, ssv2.ReasonValid)

	// Each case is an ExternalSecret over one store; all but "synced" fail.
	cases := map[string]func(store string) *esv1.ExternalSecret{
		"synced": func(store string) *esv1.ExternalSecret {
			return externalSecret(ns, "", "SecretStore", store, map[string]esv1.ExternalSecretDataRemoteRef{"token": ref("doc", "token")})
		},
		"property-of-plain": func(store string) *esv1.ExternalSecret {
			return externalSecret(ns, "", "SecretStore", store, map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("plain", "token")})
		},
		"path-into-string": func(store string) *esv1.ExternalSecret {
			return externalSecret(ns, "", "SecretStore", store, map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("doc", "token.more")})
		},
		"extract-plain": func(store string) *esv1.ExternalSecret {
			es := externalSecret(ns, "", "SecretStore", store, nil)
			es.Spec.DataFrom = []esv1.ExternalSecretDataFromRemoteRef{{Extract: &esv1.ExternalSecretDataRemoteRef{Key: "plain"}}}
			return es
		},
		"base64-plain": func(store string) *esv1.ExternalSecret {
			r := ref("plain", "")
			r.DecodingStrategy = esv1.DecodingStrategy("Base64")
			return externalSecret(ns, "", "SecretStore", store, map[string]esv1.ExternalSecretDataRemoteRef{"v": r})
		},
		"template-functions": func(store string) *esv1.ExternalSecret {
			es := externalSecret(ns, "", "SecretStore", store, map[string]esv1.ExternalSecretDataRemoteRef{"v": ref("plain", ""), "doc": ref("doc", "")})
			es.Spec.Target.Template = &esv1.ExternalSecretTemplate{Data: map[string]string{
				"json":   "{{ .v | mustFromJson }}",
				"b64":    "{{ .v | b64dec | mustFromJson }}",
				"semver": "{{ semver .v }}",
				"field":  "{{ .v.field }}",
				"doc":    "{{ (.doc | fromJson).nested.deep.more }}",
			}}
			return es
		},
	}
	var externalSecrets []*esv1.ExternalSecret
	for _, store := range []string{"local", "remote"} {
		for name, build := range cases {
			es := build(store)
			es.Name = store + "-" + name
			externalSecrets = append(externalSecrets, es)
			create(t, es)
		}
	}
	for _, es := range externalSecrets {
		want := metav1.ConditionFalse
		if strings.HasSuffix(es.Name, "-synced") {
			want = metav1.ConditionTrue
		}
		eventually(t, es.Name+" settles", func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
				return err
			}
			for _, c := range es.Status.Conditions {
				if c.Type == esv1.ConditionReady && c.Status == want && c.Message != "" {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v, want Ready=%s with a message", es.Status.Conditions, want)
		})
	}
	waitSecretData(t, ns, "remote-synced", map[string]string{"token": canary})

	var ess esv1.ExternalSecretList
	var stores ssv2.SecretStoreList
	var events corev1.EventList
	var newEvents eventsv1.EventList
	for _, list := range []client.ObjectList{&ess, &stores, &events, &newEvents} {
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if len(events.Items)+len(newEvents.Items) == 0 {
		t.Fatal("eso recorded no event: nothing to check")
	}
	places := map[string]string{"eso's and the provider process's logs": logged()}
	if places["eso's and the provider process's logs"] == "" {
		t.Fatal("eso logged nothing: nothing to check")
	}
	for what, list := range map[string]any{"ExternalSecrets": &ess, "SecretStores": &stores, "events": &events, "events.k8s.io events": &newEvents} {
		raw, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		places[what] = string(raw)
	}
	for what, text := range places {
		for _, form := range []string{canary, strings.TrimPrefix(canary, "c4n4ry-"), base64.StdEncoding.EncodeToString([]byte(canary))} {
			if i := strings.Index(text, form); i >= 0 {
				t.Errorf("%s hold a secret value: ...%s...", what, text[max(0, i-300):min(len(text), i+100)])
			}
		}
	}
}
