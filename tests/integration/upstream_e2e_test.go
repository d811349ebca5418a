package integration

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awstest"
)

// Upstream ESO's provider-agnostic end-to-end cases (v2.9.0,
// e2e/suites/provider/cases/common) as one table: each row gives the remote
// secrets a case starts from, the ExternalSecret it applies and the Secret it
// expects, and runs them black-box through eso against the API server and AWS
// Secrets Manager on moto_server, the provider upstream runs most of these
// cases against.
//
// As upstream's suite, the expected Secret is compared on its type, data,
// labels and annotations, leaving out the operator's own marks (upstream's
// managed label, owner label and data hash; eso's are all under
// reconcile.external-secrets.io/).

// upstreamCase is one upstream case, written for the namespace it runs in: the
// names of remote secrets carry the namespace, so rows sharing one moto never
// see each other's secrets.
type upstreamCase struct {
	// remote are the secrets created in Secrets Manager before the
	// ExternalSecret.
	remote []remoteSecret
	// objects are created in the namespace before the ExternalSecret.
	objects []client.Object
	// spec shapes the ExternalSecret from the default every case starts from.
	spec func(es *esv1.ExternalSecret)
	// want is the Secret the case expects: its name, type, data, labels and
	// annotations; finalizers listed must be among the Secret's.
	want *corev1.Secret
	// after runs once the Secret is as wanted.
	after func(t *testing.T, r *upstreamRun)
}

type remoteSecret struct {
	name, value string
	tags        map[string]string
}

// upstreamRun is what a row's after step works with.
type upstreamRun struct {
	ns  string
	es  *esv1.ExternalSecret
	aws *sm.Client
}

type upstreamRow struct {
	// name is the upstream case function.
	name  string
	build func(ns string) upstreamCase
}

// The defaults of upstream's test cases.
const (
	upstreamESName     = "e2e-es"
	upstreamTarget     = "target-secret"
	upstreamStore      = "aws"
	upstreamRefresh    = 5 * time.Second
	dockerConfigKey    = ".dockerconfigjson"
	sshPrivateKeyKey   = "ssh-privatekey"
	mysecretTemplate   = "{{ .mysecret }}"
	upstreamFoo1Bar1   = `{"foo1":"foo1-val","bar1":"bar1-val"}`
	upstreamFoo2Bar2   = `{"foo2":"foo2-val","bar2":"bar2-val"}`
	upstreamFindValue  = `{"foo1":"foo1-val"}`
	upstreamDockerAuth = `{"auths":{"https://index.docker.io/v1/":{"auth":"c3R...zE2"}}}`
)

func TestUpstreamCommonProviderCases(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	awsClient := sm.NewFromConfig(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("seed", "seed", "")},
		func(o *sm.Options) { o.BaseEndpoint = aws.String(endpoint) })
	runEso(t, testConfig())
	sshKey := newSSHPrivateKey(t)

	rows := []upstreamRow{
		// common.SimpleDataSync
		{name: "SimpleDataSync", build: func(ns string) upstreamCase {
			one, other := ns+"-one", ns+"-other"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: "bar"}, {name: other, value: "bar"}},
				spec:   withData(dataRef(one, one, ""), dataRef(other, other, "")),
				want:   opaque(upstreamTarget, map[string]string{one: "bar", other: "bar"}),
			}
		}},
		// common.SyncWithoutTargetName
		{name: "SyncWithoutTargetName", build: func(ns string) upstreamCase {
			one := ns + "-one"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: "bar"}},
				spec:   chain(withoutTargetName, withData(dataRef(one, one, ""))),
				want:   opaque(upstreamESName, map[string]string{one: "bar"}),
			}
		}},
		// common.JSONDataWithProperty
		{name: "JSONDataWithProperty", build: func(ns string) upstreamCase {
			one, two := ns+"-one", ns+"-two"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: upstreamFoo1Bar1}, {name: two, value: upstreamFoo2Bar2}},
				spec:   withData(dataRef(one, one, "foo1"), dataRef(two, two, "bar2")),
				want:   opaque(upstreamTarget, map[string]string{one: "foo1-val", two: "bar2-val"}),
			}
		}},
		// common.JSONDataWithoutTargetName
		{name: "JSONDataWithoutTargetName", build: func(ns string) upstreamCase {
			one := ns + "-one"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: `{"foo":"foo-val","bar":"bar-val"}`}},
				spec:   chain(withoutTargetName, withData(dataRef(one, one, "foo"))),
				want:   opaque(upstreamESName, map[string]string{one: "foo-val"}),
			}
		}},
		// common.JSONDataWithTemplate
		{name: "JSONDataWithTemplate", build: func(ns string) upstreamCase {
			one, other := ns+"-one", ns+"-other"
			want := opaque(upstreamTarget, map[string]string{"my-data": "executed: foo1-val|bar2-val"})
			want.Labels = map[string]string{"example": "label"}
			want.Annotations = map[string]string{"example": "annotation"}
			want.Finalizers = []string{"example.com/finalizer"}
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: upstreamFoo1Bar1}, {name: other, value: upstreamFoo2Bar2}},
				spec: chain(withData(dataRef("one", one, "foo1"), dataRef("two", other, "bar2")),
					withTemplate(&esv1.ExternalSecretTemplate{
						Metadata: esv1.ExternalSecretTemplateMetadata{
							Labels:      map[string]string{"example": "label"},
							Annotations: map[string]string{"example": "annotation"},
							Finalizers:  []string{"example.com/finalizer"},
						},
						Data: map[string]string{"my-data": "executed: {{ .one }}|{{ .two }}"},
					})),
				want: want,
			}
		}},
		// common.JSONDataWithTemplateFromLiteral
		{name: "JSONDataWithTemplateFromLiteral", build: func(ns string) upstreamCase {
			one, other := ns+"-one", ns+"-other"
			literal := "executed-{{ .one }}: {{ .two }}"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: upstreamFoo1Bar1}, {name: other, value: upstreamFoo2Bar2}},
				spec: chain(withData(dataRef("one", one, "foo1"), dataRef("two", other, "bar2")),
					withTemplate(&esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
						{Literal: &literal, Target: esv1.TemplateTargetData},
					}})),
				want: opaque(upstreamTarget, map[string]string{"executed-foo1-val": "bar2-val"}),
			}
		}},
		// common.TemplateFromConfigmaps
		{name: "TemplateFromConfigmaps", build: func(ns string) upstreamCase {
			one, other := ns+"-one", ns+"-other"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: upstreamFoo1Bar1}, {name: other, value: upstreamFoo2Bar2}},
				objects: []client.Object{&corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test"},
					Data: map[string]string{
						"config.json": "executed-{{ .one}}-{{ .two}}",
						"templated":   "executed-{{ .one}}: {{ .two}}",
					},
				}},
				spec: chain(withData(dataRef("one", one, "foo1"), dataRef("two", other, "bar2")),
					withTemplate(&esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{
						ConfigMap: &esv1.TemplateRef{Name: "test", Items: []esv1.TemplateRefItem{
							{Key: "config.json", TemplateAs: esv1.TemplateScopeValues},
							{Key: "templated", TemplateAs: esv1.TemplateScopeKeysAndValues},
						}},
						Target: esv1.TemplateTargetData,
					}}})),
				want: opaque(upstreamTarget, map[string]string{
					"config.json":       "executed-foo1-val-bar2-val",
					"executed-foo1-val": "bar2-val",
				}),
			}
		}},
		// common.JSONDataFromSync
		{name: "JSONDataFromSync", build: func(ns string) upstreamCase {
			one := ns + "-one"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: `{ "name": "great-name", "surname": "great-surname" }`}},
				spec:   withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Extract: &esv1.ExternalSecretDataRemoteRef{Key: one}}),
				want:   opaque(upstreamTarget, map[string]string{"name": "great-name", "surname": "great-surname"}),
			}
		}},
		// common.JSONDataFromExtractProperty
		{name: "JSONDataFromExtractProperty", build: func(ns string) upstreamCase {
			key := ns + "-json-property"
			return upstreamCase{
				remote: []remoteSecret{{name: key, value: `{"db":{"username":"my_user","password":"my_pass","port":5432},"apiKey":"myApiKey"}`}},
				spec:   withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Extract: &esv1.ExternalSecretDataRemoteRef{Key: key, Property: "db"}}),
				want:   opaque(upstreamTarget, map[string]string{"username": "my_user", "password": "my_pass", "port": "5432"}),
			}
		}},
		// common.JSONDataFromRewrite
		{name: "JSONDataFromRewrite", build: func(ns string) upstreamCase {
			one := ns + "-one"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: `{ "username": "myuser.name", "address": "happy street" }`}},
				spec: withDataFrom(esv1.ExternalSecretDataFromRemoteRef{
					Extract: &esv1.ExternalSecretDataRemoteRef{Key: one},
					Rewrite: []esv1.ExternalSecretRewrite{{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: "(.*)", Target: "my_$1"}}},
				}),
				want: opaque(upstreamTarget, map[string]string{"my_username": "myuser.name", "my_address": "happy street"}),
			}
		}},
		// common.NestedJSONWithGJSON
		{name: "NestedJSONWithGJSON", build: func(ns string) upstreamCase {
			one := ns + "-one"
			nested := `{
	"name": {"first": "Tom", "last": "Anderson"},
	"friends": [
		{"first": "Dale", "last": "Murphy"},
		{"first": "Roger", "last": "Craig"},
		{"first": "Jane", "last": "Murphy"}
	]
}`
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: nested}},
				spec:   withData(dataRef("firstname", one, "name.first"), dataRef("first_friend", one, "friends.1.first")),
				want:   opaque(upstreamTarget, map[string]string{"firstname": "Tom", "first_friend": "Roger"}),
			}
		}},
		// common.DockerJSONConfig
		{name: "DockerJSONConfig", build: func(ns string) upstreamCase {
			key := ns + "-docker-config-example"
			return upstreamCase{
				// The property is a JSON object; it is written as its JSON text.
				remote: []remoteSecret{{name: key, value: `{"dockerconfig": ` + upstreamDockerAuth + `}`}},
				spec: chain(withData(dataRef("mysecret", key, "dockerconfig")),
					withTemplate(&esv1.ExternalSecretTemplate{Data: map[string]string{dockerConfigKey: mysecretTemplate}})),
				want: opaque(upstreamTarget, map[string]string{dockerConfigKey: upstreamDockerAuth}),
			}
		}},
		// common.DataPropertyDockerconfigJSON
		{name: "DataPropertyDockerconfigJSON", build: func(ns string) upstreamCase {
			key := ns + "-docker-config-example"
			// Here the property is a JSON string holding the configuration.
			config := `{"auths":{"https://index.docker.io/v1/": {"auth": "c3R...zE2"}}}`
			want := opaque(upstreamTarget, map[string]string{dockerConfigKey: config})
			want.Type = corev1.SecretTypeDockerConfigJson
			return upstreamCase{
				remote: []remoteSecret{{name: key, value: jsonObject(t, map[string]string{"dockerconfig": config})}},
				spec: chain(withData(dataRef("mysecret", key, "dockerconfig")),
					withTemplate(&esv1.ExternalSecretTemplate{
						Type: corev1.SecretTypeDockerConfigJson,
						Data: map[string]string{dockerConfigKey: mysecretTemplate},
					})),
				want: want,
			}
		}},
		// common.SSHKeySync
		{name: "SSHKeySync", build: func(ns string) upstreamCase {
			key := ns + "-ssh-priv-key-example"
			want := opaque(upstreamTarget, map[string]string{sshPrivateKeyKey: sshKey})
			want.Type = corev1.SecretTypeSSHAuth
			return upstreamCase{
				remote: []remoteSecret{{name: key, value: sshKey}},
				spec: chain(withData(dataRef("mysecret", key, "")),
					withTemplate(&esv1.ExternalSecretTemplate{
						Type: corev1.SecretTypeSSHAuth,
						Data: map[string]string{sshPrivateKeyKey: mysecretTemplate},
					})),
				want: want,
			}
		}},
		// common.SSHKeySyncDataProperty
		{name: "SSHKeySyncDataProperty", build: func(ns string) upstreamCase {
			key := ns + "-ssh-key-property"
			want := opaque(upstreamTarget, map[string]string{sshPrivateKeyKey: sshKey})
			want.Type = corev1.SecretTypeSSHAuth
			return upstreamCase{
				remote: []remoteSecret{{name: key, value: jsonObject(t, map[string]string{"ssh-auth": sshKey})}},
				spec: chain(withData(dataRef("mysecret", key, "ssh-auth")),
					withTemplate(&esv1.ExternalSecretTemplate{
						Type: corev1.SecretTypeSSHAuth,
						Data: map[string]string{sshPrivateKeyKey: mysecretTemplate},
					})),
				want: want,
			}
		}},
		// common.DeletionPolicyDelete
		{name: "DeletionPolicyDelete", build: func(ns string) upstreamCase {
			one, other := ns+"-one", ns+"-other"
			return upstreamCase{
				remote: []remoteSecret{{name: one, value: "bazz"}, {name: other, value: "bazz"}},
				spec: chain(withData(dataRef(one, one, ""), dataRef(other, other, "")), func(es *esv1.ExternalSecret) {
					es.Spec.Target.DeletionPolicy = esv1.DeletionPolicyDelete
				}),
				want: opaque(upstreamTarget, map[string]string{one: "bazz", other: "bazz"}),
				after: func(t *testing.T, r *upstreamRun) {
					// Both remote secrets go; a later refresh deletes the Secret.
					deleteRemote(t, r.aws, one, other)
					eventually(t, "Secret "+upstreamTarget+" to be deleted", func() error {
						if secretExists(t, r.ns, upstreamTarget) {
							return errors.New("still exists")
						}
						return nil
					})
					waitReady(t, r.es, metav1.ConditionTrue, esv1.ReasonSecretDeleted)
				},
			}
		}},
		// common.DecodingPolicySync
		{name: "DecodingPolicySync", build: func(ns string) upstreamCase {
			one := ns + "-one"
			decode := func(strategy esv1.DecodingStrategy) esv1.ExternalSecretDataRemoteRef {
				return esv1.ExternalSecretDataRemoteRef{Key: one, Property: "name", DecodingStrategy: strategy}
			}
			return upstreamCase{
				remote: []remoteSecret{{name: one,
					value: `{ "name": "Z3JlYXQtbmFtZQ==", "surname": "Z3JlYXQtc3VybmFtZQ==", "address": "happy calm street No. 1" }`}},
				spec: chain(
					withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Extract: &esv1.ExternalSecretDataRemoteRef{Key: one, DecodingStrategy: esv1.DecodingAuto}}),
					withData(
						esv1.ExternalSecretData{SecretKey: "base64", RemoteRef: decode(esv1.DecodingBase64)},
						esv1.ExternalSecretData{SecretKey: "none", RemoteRef: decode(esv1.DecodingNone)},
					)),
				want: opaque(upstreamTarget, map[string]string{
					"name":    "great-name",
					"surname": "great-surname",
					"address": "happy calm street No. 1",
					"base64":  "great-name",
					"none":    "Z3JlYXQtbmFtZQ==",
				}),
			}
		}},
		// common.FindByName
		{name: "FindByName", build: func(ns string) upstreamCase {
			names := []string{"e2e_find_name_" + ns + "_one", "e2e_find_name_" + ns + "_two", "e2e_find_name_" + ns + "_three"}
			return upstreamCase{
				remote: sameValue(upstreamFindValue, nil, names...),
				spec: withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Find: &esv1.ExternalSecretFind{
					Name: &esv1.FindName{RegExp: "e2e_find_name_" + ns + ".+"},
				}}),
				want: opaque(upstreamTarget, valuesOf(upstreamFindValue, names...)),
			}
		}},
		// common.FindByNameAndRewrite
		{name: "FindByNameAndRewrite", build: func(ns string) upstreamCase {
			prefix := "e2e_find_and_rewrite_"
			suffixes := []string{ns + "_one", ns + "_two", ns + "_three"}
			var names []string
			for _, s := range suffixes {
				names = append(names, prefix+s)
			}
			return upstreamCase{
				remote: sameValue(upstreamFindValue, nil, names...),
				spec: withDataFrom(esv1.ExternalSecretDataFromRemoteRef{
					Find:    &esv1.ExternalSecretFind{Name: &esv1.FindName{RegExp: prefix + ns + ".+"}},
					Rewrite: []esv1.ExternalSecretRewrite{{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: prefix + "(.*)", Target: "$1"}}},
				}),
				want: opaque(upstreamTarget, valuesOf(upstreamFindValue, suffixes...)),
			}
		}},
		// common.FindByNameWithPath
		{name: "FindByNameWithPath", build: func(ns string) upstreamCase {
			// Only the names starting with the path are found, though the
			// regexp matches all three.
			outside, two, three := "e2e-find-name-"+ns+"-one", ns+"-two", ns+"-three"
			path := ns
			return upstreamCase{
				remote: sameValue(upstreamFindValue, nil, outside, two, three),
				spec: withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Find: &esv1.ExternalSecretFind{
					Path: &path, Name: &esv1.FindName{RegExp: ".+"},
				}}),
				want: opaque(upstreamTarget, valuesOf(upstreamFindValue, two, three)),
			}
		}},
		// common.FindByTag
		{name: "FindByTag", build: func(ns string) upstreamCase {
			names := []string{"e2e-find-name-" + ns + "-one", "e2e-find-name-" + ns + "-two", "e2e-find-name-" + ns + "-three"}
			tags := map[string]string{"test": ns}
			return upstreamCase{
				remote: sameValue(upstreamFoo1Bar1, tags, names...),
				spec:   withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Find: &esv1.ExternalSecretFind{Tags: tags}}),
				want:   opaque(upstreamTarget, valuesOf(upstreamFoo1Bar1, names...)),
			}
		}},
		// common.FindByTagWithPath
		{name: "FindByTagWithPath", build: func(ns string) upstreamCase {
			// All three carry the tag; only those under the path are found.
			path := "foobar"
			outside, two, three := "e2e-find-name-"+ns+"-one", path+"-"+ns+"-two", path+"-"+ns+"-three"
			tags := map[string]string{"test": ns}
			return upstreamCase{
				remote: sameValue(upstreamFoo1Bar1, tags, outside, two, three),
				spec:   withDataFrom(esv1.ExternalSecretDataFromRemoteRef{Find: &esv1.ExternalSecretFind{Path: &path, Tags: tags}}),
				want:   opaque(upstreamTarget, valuesOf(upstreamFoo1Bar1, two, three)),
			}
		}},
		// common.StatusNotUpdatedAfterSuccessfulSync (regressions.go)
		{name: "StatusNotUpdatedAfterSuccessfulSync", build: func(ns string) upstreamCase {
			key := ns + "-feedback-loop-key"
			return upstreamCase{
				remote: []remoteSecret{{name: key, value: "feedback-loop-value"}},
				spec: chain(withData(dataRef("value", key, "")), func(es *esv1.ExternalSecret) {
					es.Name = "feedback-loop-es"
					es.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
				}),
				want:  opaque(upstreamTarget, map[string]string{"value": "feedback-loop-value"}),
				after: requireQuietStatus,
			}
		}},
	}

	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			ns := env.Namespace(t, "upstream", nil)
			c := row.build(ns)
			createAWSStore(t, ns, endpoint)
			for _, r := range c.remote {
				createRemote(ctx, t, awsClient, r)
			}
			create(t, c.objects...)
			es := &esv1.ExternalSecret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: upstreamESName},
				Spec: esv1.ExternalSecretSpec{
					SecretStoreRef:  &esv1.SecretStoreRef{Kind: "SecretStore", Name: upstreamStore},
					RefreshInterval: &metav1.Duration{Duration: upstreamRefresh},
					Target:          esv1.ExternalSecretTarget{Name: upstreamTarget},
				},
			}
			if c.spec != nil {
				c.spec(es)
			}
			create(t, es)
			waitUpstreamSecret(t, es, c.want)
			if c.after != nil {
				c.after(t, &upstreamRun{ns: ns, es: es, aws: awsClient})
			}
		})
	}
}

// createAWSStore creates the namespace's store: AWS Secrets Manager at moto
// with static keys from a Secret, as upstream's suite's static-auth store.
func createAWSStore(t *testing.T, ns, endpoint string) {
	t.Helper()
	create(t,
		plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: upstreamStore}, Spec: provv1.AWSSpec{
			Region: "eu-central-1", Endpoint: endpoint,
			Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
				AccessKeyID:     provv1.SecretKeySelector{Name: "aws-creds", Key: "id"},
				SecretAccessKey: provv1.SecretKeySelector{Name: "aws-creds", Key: "secret"},
			}},
		}},
		secretStore(ns, upstreamStore, storeSpec("AWSSecretManager", upstreamStore, "")),
	)
}

func createRemote(ctx context.Context, t *testing.T, c *sm.Client, r remoteSecret) {
	t.Helper()
	in := &sm.CreateSecretInput{Name: aws.String(r.name), SecretString: aws.String(r.value)}
	for k, v := range r.tags {
		in.Tags = append(in.Tags, smtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	if _, err := c.CreateSecret(ctx, in); err != nil {
		t.Fatalf("creating remote secret %s: %v", r.name, err)
	}
}

func deleteRemote(t *testing.T, c *sm.Client, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := c.DeleteSecret(context.Background(), &sm.DeleteSecretInput{
			SecretId: aws.String(n), ForceDeleteWithoutRecovery: aws.Bool(true),
		}); err != nil {
			t.Fatalf("deleting remote secret %s: %v", n, err)
		}
	}
}

// waitUpstreamSecret waits until the ExternalSecret's Secret is as want says,
// and reports how it differs, with the ExternalSecret's conditions, if it
// never gets there.
func waitUpstreamSecret(t *testing.T, es *esv1.ExternalSecret, want *corev1.Secret) {
	t.Helper()
	var got corev1.Secret
	key := client.ObjectKey{Namespace: es.Namespace, Name: want.Name}
	deadline := time.Now().Add(waitTimeout)
	var err error
	for time.Now().Before(deadline) {
		if err = env.Client.Get(context.Background(), key, &got); err == nil {
			if err = secretDiff(want, &got); err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	var conds []string
	if env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es) == nil {
		for _, c := range es.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	t.Fatalf("Secret %s not as upstream expects after %v: %v; ExternalSecret conditions: %v", key, waitTimeout, err, conds)
}

// secretDiff compares as upstream's suite does: type, data, and labels and
// annotations without the operator's own marks.
func secretDiff(want, got *corev1.Secret) error {
	if got.Type != want.Type {
		return fmt.Errorf("type %q, want %q", got.Type, want.Type)
	}
	if l := withoutOperatorMarks(got.Labels); !maps.Equal(l, want.Labels) {
		return fmt.Errorf("labels %v, want %v", l, want.Labels)
	}
	if a := withoutOperatorMarks(got.Annotations); !maps.Equal(a, want.Annotations) {
		return fmt.Errorf("annotations %v, want %v", a, want.Annotations)
	}
	for _, f := range want.Finalizers {
		if !slices.Contains(got.Finalizers, f) {
			return fmt.Errorf("finalizers %v, want %s among them", got.Finalizers, f)
		}
	}
	if !maps.EqualFunc(got.Data, want.Data, bytes.Equal) {
		var diffs []string
		for k, v := range want.Data {
			if g, ok := got.Data[k]; !ok {
				diffs = append(diffs, "missing "+k)
			} else if !bytes.Equal(g, v) {
				diffs = append(diffs, fmt.Sprintf("%s=%q, want %q", k, g, v))
			}
		}
		for k := range got.Data {
			if _, ok := want.Data[k]; !ok {
				diffs = append(diffs, "unexpected "+k)
			}
		}
		sort.Strings(diffs)
		return fmt.Errorf("data differs: %s", strings.Join(diffs, "; "))
	}
	return nil
}

func withoutOperatorMarks(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(k, "reconcile.external-secrets.io/") {
			out[k] = v
		}
	}
	return out
}

// requireQuietStatus: once synced with an hourly refresh, the ExternalSecret
// settles and then is not written again (no status feedback loop).
func requireQuietStatus(t *testing.T, r *upstreamRun) {
	es := &esv1.ExternalSecret{}
	get := func() error { return env.Client.Get(context.Background(), client.ObjectKeyFromObject(r.es), es) }
	var baseline *esv1.ExternalSecret
	eventuallyWithin(t, 30*time.Second, "the ExternalSecret to settle after its sync", func() error {
		if err := get(); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(es.Status.Conditions, "Ready")
		if ready == nil || ready.Status != metav1.ConditionTrue {
			return fmt.Errorf("Ready %+v", ready)
		}
		if es.Status.RefreshTime.IsZero() || es.Status.SyncedResourceVersion == "" {
			return errors.New("refreshTime or syncedResourceVersion not set")
		}
		if baseline == nil || !sameStatusWrite(baseline, es) {
			baseline = es.DeepCopy()
			time.Sleep(450 * time.Millisecond)
			return errors.New("still changing")
		}
		return nil
	})
	consistently(t, 10*time.Second, "the ExternalSecret to stay as synced", func() error {
		if err := get(); err != nil {
			return err
		}
		if !sameStatusWrite(baseline, es) {
			return fmt.Errorf("written again: resourceVersion %s -> %s, refreshTime %v -> %v, syncedResourceVersion %s -> %s",
				baseline.ResourceVersion, es.ResourceVersion, baseline.Status.RefreshTime, es.Status.RefreshTime,
				baseline.Status.SyncedResourceVersion, es.Status.SyncedResourceVersion)
		}
		return nil
	})
}

func sameStatusWrite(a, b *esv1.ExternalSecret) bool {
	return a.ResourceVersion == b.ResourceVersion && a.Status.RefreshTime.Equal(&b.Status.RefreshTime) &&
		a.Status.SyncedResourceVersion == b.Status.SyncedResourceVersion
}

func opaque(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func chain(fs ...func(*esv1.ExternalSecret)) func(*esv1.ExternalSecret) {
	return func(es *esv1.ExternalSecret) {
		for _, f := range fs {
			f(es)
		}
	}
}

func withoutTargetName(es *esv1.ExternalSecret) { es.Spec.Target.Name = "" }

func withData(data ...esv1.ExternalSecretData) func(*esv1.ExternalSecret) {
	return func(es *esv1.ExternalSecret) { es.Spec.Data = append(es.Spec.Data, data...) }
}

func withDataFrom(from ...esv1.ExternalSecretDataFromRemoteRef) func(*esv1.ExternalSecret) {
	return func(es *esv1.ExternalSecret) { es.Spec.DataFrom = append(es.Spec.DataFrom, from...) }
}

func withTemplate(tpl *esv1.ExternalSecretTemplate) func(*esv1.ExternalSecret) {
	return func(es *esv1.ExternalSecret) { es.Spec.Target.Template = tpl }
}

func dataRef(secretKey, key, property string) esv1.ExternalSecretData {
	return esv1.ExternalSecretData{SecretKey: secretKey, RemoteRef: ref(key, property)}
}

func sameValue(value string, tags map[string]string, names ...string) []remoteSecret {
	var out []remoteSecret
	for _, n := range names {
		out = append(out, remoteSecret{name: n, value: value, tags: tags})
	}
	return out
}

func valuesOf(value string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = value
	}
	return out
}

func jsonObject(t *testing.T, m map[string]string) string {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newSSHPrivateKey is a fresh OpenSSH private key in PEM: a multi-line value
// that must reach the Secret byte for byte.
func newSSHPrivateKey(t *testing.T) string {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "upstream e2e")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}
