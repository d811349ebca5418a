package apis_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/eso-dev/eso/tests/testenv"
)

// upstreamCRDDir holds upstream ESO's CRDs (see its README.md).
func upstreamCRDDir() string {
	return filepath.Join(testenv.RepoRoot(), "apis", "testdata", "upstream-crds")
}

// upstreamKinds maps each vendored upstream CRD to eso's CRD that serves
// it: upstream's own group for the generator kinds (whose specs are eso's
// kinds' specs: TestUpstreamGeneratorKindsCarryEsosSpecs).
var upstreamKinds = []struct{ upstream, eso string }{
	{"external-secrets.io_externalsecrets.yaml", "external-secrets.io_externalsecrets.yaml"},
	{"external-secrets.io_clusterexternalsecrets.yaml", "external-secrets.io_clusterexternalsecrets.yaml"},
	{"generators.external-secrets.io_passwords.yaml", "generators.external-secrets.io_passwords.yaml"},
	{"generators.external-secrets.io_uuids.yaml", "generators.external-secrets.io_uuids.yaml"},
	{"generators.external-secrets.io_ecrauthorizationtokens.yaml", "generators.external-secrets.io_ecrauthorizationtokens.yaml"},
	{"generators.external-secrets.io_stssessiontokens.yaml", "generators.external-secrets.io_stssessiontokens.yaml"},
	{"generators.external-secrets.io_gcraccesstokens.yaml", "generators.external-secrets.io_gcraccesstokens.yaml"},
	{"generators.external-secrets.io_vaultdynamicsecrets.yaml", "generators.external-secrets.io_vaultdynamicsecrets.yaml"},
	{"generators.external-secrets.io_sshkeys.yaml", "generators.external-secrets.io_sshkeys.yaml"},
	{"generators.external-secrets.io_fakes.yaml", "generators.external-secrets.io_fakes.yaml"},
	{"generators.external-secrets.io_mfas.yaml", "generators.external-secrets.io_mfas.yaml"},
	{"generators.external-secrets.io_clustergenerators.yaml", "generators.external-secrets.io_clustergenerators.yaml"},
}

// clusterGeneratorMembers maps the members of upstream's ClusterGenerator
// spec.generator to their kinds.
var clusterGeneratorMembers = map[string]string{
	"passwordSpec": "Password", "uuidSpec": "UUID", "ecrAuthorizationTokenSpec": "ECRAuthorizationToken",
	"stsSessionTokenSpec": "STSSessionToken", "gcrAccessTokenSpec": "GCRAccessToken",
	"vaultDynamicSecretSpec": "VaultDynamicSecret", "sshKeySpec": "SSHKey", "fakeSpec": "Fake", "mfaSpec": "MFA",
}

// upstreamExclusions are the upstream paths eso does not serve as upstream
// does, each with its reason: "Kind:path" covers that path and everything
// below it; "*" stands for any kind or any one path segment. An
// ExternalSecret entry also covers the same path under a
// ClusterExternalSecret's spec.externalSecretSpec. Keep it short: a field
// eso could serve is a failure to fix, not an entry here. Every entry must
// still match a difference (stale entries fail).
var upstreamExclusions = map[string]string{
	// Refused deliberately.
	"ExternalSecret:spec.target.manifest":                              "generic targets: eso writes only Secrets, never whatever kind a tenant names",
	"ExternalSecret:spec.data[].sourceRef.generatorRef":                "deprecated upstream and never implemented there (it reads the default store instead); eso refuses it rather than ignore it",
	"ExternalSecret:spec.dataFrom[].sourceRef.generatorRef.apiVersion": "eso infers it from the kind (Generator and ClusterGenerator are eso's v2alpha1 kinds) and admits only apiVersions of generators, upstream's default among them",
	"*:spec.auth.*.*.namespace":                                        "upstream ignores it for generator kinds (credentials come from the ExternalSecret's namespace); eso does not accept a field it would ignore",
	"MFA:spec.secret.namespace":                                        "upstream ignores it (the seed is read in the ExternalSecret's namespace); eso does not accept a field it would ignore",
	"VaultDynamicSecret:spec.method":                                   "eso admits GET, LIST, POST, PUT and DELETE; upstream sends any other string as a write",
	"ECRAuthorizationToken:spec.scope":                                 "eso admits private and public; upstream reads any other value, a typo of public included, as private",
	"VaultDynamicSecret:spec.parameters":                               "eso requires a JSON object (the request's fields); upstream fails any other JSON at generation",
	// Not yet served.
	"GCRAccessToken:spec.auth.workloadIdentityFederation": "not yet served: eso has no GCP Workload Identity Federation (external account) login; secretRef and workloadIdentity are served",
}

// TestUpstreamSchemaParity walks every property path of upstream's spec for
// each kind eso serves and checks eso's CRD serves it: same type, every
// upstream enum value accepted, upstream's default where it has one. It
// does not compare bounds, patterns, CEL rules or required fields: those are
// where eso refuses at admission what upstream would fail at sync.
func TestUpstreamSchemaParity(t *testing.T) {
	used, walked := map[string]bool{}, 0
	for _, k := range upstreamKinds {
		up, kind := loadSpecSchema(t, filepath.Join(upstreamCRDDir(), k.upstream))
		own, _ := loadSpecSchema(t, filepath.Join(testenv.CRDDir(), k.eso))
		var w walk
		w.compare("spec", up, own)
		walked += w.paths
		for _, f := range w.findings {
			if key, ok := excluded(kind, f.path); ok {
				used[key] = true
				continue
			}
			t.Errorf("%s %s: %s", kind, f.path, f.problem)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(upstreamExclusions)) {
		if !used[key] {
			t.Errorf("exclusion %s matches no difference: remove it", key)
		}
	}
	if walked < 250 {
		t.Errorf("walked %d upstream paths in all, want at least 250: is the walk broken?", walked)
	}
}

// TestUpstreamSchemaWalkFindsDifferences: the walk reports a missing field,
// a refused enum value, another type and another default, and nothing else.
func TestUpstreamSchemaWalkFindsDifferences(t *testing.T) {
	up, _ := loadSpecSchema(t, filepath.Join(upstreamCRDDir(), "generators.external-secrets.io_passwords.yaml"))
	own, _ := loadSpecSchema(t, filepath.Join(upstreamCRDDir(), "generators.external-secrets.io_passwords.yaml"))
	delete(own.Properties, "secretKeys")
	enc := own.Properties["encoding"]
	enc.Enum = enc.Enum[:1]
	own.Properties["encoding"] = enc
	digits := own.Properties["digits"]
	digits.Type = "string"
	own.Properties["digits"] = digits
	length := own.Properties["length"]
	length.Default = &apiextensionsv1.JSON{Raw: []byte("12")}
	own.Properties["length"] = length
	var w walk
	w.compare("spec", up, own)
	var got []string
	for _, f := range w.findings {
		got = append(got, f.path)
	}
	want := []string{"spec.digits", "spec.encoding", "spec.length", "spec.secretKeys"}
	if !slices.Equal(got, want) {
		t.Errorf("findings at %v, want %v: %v", got, want, w.findings)
	}
	for key, want := range map[string]bool{
		"ExternalSecret spec.target.manifest.apiVersion":                               true,
		"ClusterExternalSecret spec.externalSecretSpec.target.manifest":                true,
		"ExternalSecret spec.target.manifestation":                                     false,
		"STSSessionToken spec.auth.jwt.serviceAccountRef.namespace":                    true,
		"STSSessionToken spec.auth.namespace":                                          false,
		"VaultDynamicSecret spec.provider.auth.kubernetes.serviceAccountRef.namespace": false, // served: see v1blocks
	} {
		kind, path, _ := strings.Cut(key, " ")
		if _, got := excluded(kind, path); got != want {
			t.Errorf("excluded(%s) = %v, want %v", key, got, want)
		}
	}
}

// TestUpstreamGeneratorKindsCarryEsosSpecs: each upstream generator kind
// eso serves has, in eso's CRDs, exactly the spec schema of eso's kind of
// the same name (provider.generator.external-secrets.io), so translating
// one into the other copies the spec; and upstream's ClusterGenerator
// embeds those same specs.
func TestUpstreamGeneratorKindsCarryEsosSpecs(t *testing.T) {
	cg, _ := loadSpecSchema(t, filepath.Join(testenv.CRDDir(), "generators.external-secrets.io_clustergenerators.yaml"))
	embedded := cg.Properties["generator"].Properties
	members := map[string]string{
		"passwords": "passwordSpec", "uuids": "uuidSpec", "ecrauthorizationtokens": "ecrAuthorizationTokenSpec",
		"stssessiontokens": "stsSessionTokenSpec", "gcraccesstokens": "gcrAccessTokenSpec",
		"vaultdynamicsecrets": "vaultDynamicSecretSpec", "sshkeys": "sshKeySpec", "fakes": "fakeSpec", "mfas": "mfaSpec",
	}
	if len(embedded) != len(members) {
		t.Errorf("eso's upstream ClusterGenerator embeds %d kinds, want %d", len(embedded), len(members))
	}
	for plural, member := range members {
		served, _ := loadSpecSchema(t, filepath.Join(testenv.CRDDir(), "generators.external-secrets.io_"+plural+".yaml"))
		own, _ := loadSpecSchema(t, filepath.Join(testenv.CRDDir(), "provider.generator.external-secrets.io_"+plural+".yaml"))
		if !reflect.DeepEqual(served, own) {
			t.Errorf("generators.external-secrets.io %s: spec differs from eso's kind's", plural)
		}
		if !reflect.DeepEqual(embedded[member], own) {
			t.Errorf("ClusterGenerator spec.generator.%s differs from eso's %s spec", member, plural)
		}
	}
}

// finding is one way eso's schema does not serve an upstream path.
type finding struct{ path, problem string }

// walk compares an upstream schema with eso's.
type walk struct {
	findings []finding
	paths    int // upstream paths visited
}

// compare records where own does not serve what up allows at path.
func (w *walk) compare(path string, up, own apiextensionsv1.JSONSchemaProps) {
	w.paths++
	add := func(format string, args ...any) {
		w.findings = append(w.findings, finding{path, fmt.Sprintf(format, args...)})
	}
	if own.XPreserveUnknownFields != nil && *own.XPreserveUnknownFields && own.Type == "" {
		return // eso keeps anything here
	}
	if typeOf(up) != typeOf(own) {
		add("type %s upstream, %s in eso", typeOf(up), typeOf(own))
		return
	}
	if len(own.Enum) > 0 {
		var refused []string
		for _, v := range up.Enum {
			if !slices.ContainsFunc(own.Enum, func(o apiextensionsv1.JSON) bool { return string(o.Raw) == string(v.Raw) }) {
				refused = append(refused, string(v.Raw))
			}
		}
		if len(up.Enum) == 0 {
			refused = append(refused, "(any value: upstream has no enum)")
		}
		if len(refused) > 0 {
			add("eso's enum refuses %s", strings.Join(refused, ", "))
		}
	}
	if up.Default != nil && (own.Default == nil || !sameDefault(up.Default.Raw, own.Default.Raw)) {
		ownDefault := "none"
		if own.Default != nil {
			ownDefault = string(own.Default.Raw)
		}
		add("default %s upstream, %s in eso", up.Default.Raw, ownDefault)
	}
	if up.XPreserveUnknownFields != nil && *up.XPreserveUnknownFields &&
		(own.XPreserveUnknownFields == nil || !*own.XPreserveUnknownFields) {
		add("upstream keeps unknown fields, eso prunes them")
	}
	for _, name := range slices.Sorted(maps.Keys(up.Properties)) {
		sub, ok := own.Properties[name]
		if !ok {
			w.findings = append(w.findings, finding{path + "." + name, "not served by eso"})
			continue
		}
		w.compare(path+"."+name, up.Properties[name], sub)
	}
	if up.Items != nil && up.Items.Schema != nil {
		if own.Items == nil || own.Items.Schema == nil {
			add("upstream has list items, eso does not")
		} else {
			w.compare(path+"[]", *up.Items.Schema, *own.Items.Schema)
		}
	}
	if up.AdditionalProperties != nil && up.AdditionalProperties.Schema != nil {
		if own.AdditionalProperties == nil || own.AdditionalProperties.Schema == nil {
			add("upstream has map values, eso does not")
		} else {
			w.compare(path+"{}", *up.AdditionalProperties.Schema, *own.AdditionalProperties.Schema)
		}
	}
}

// typeOf names a schema's type, int-or-string and free-form included.
func typeOf(s apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "" && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return "any"
	case s.Type == "":
		return "(untyped)"
	}
	return s.Type
}

// sameDefault: equal JSON, or two spellings of one duration ("1h", "1h0m0s").
func sameDefault(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	if reflect.DeepEqual(x, y) {
		return true
	}
	xs, xok := x.(string)
	ys, yok := y.(string)
	if !xok || !yok {
		return false
	}
	dx, errx := time.ParseDuration(xs)
	dy, erry := time.ParseDuration(ys)
	return errx == nil && erry == nil && dx == dy
}

// excluded reports the exclusion covering kind's path, if any.
func excluded(kind, path string) (string, bool) {
	type candidate struct{ kind, path string }
	candidates := []candidate{{kind, path}}
	if rest, ok := strings.CutPrefix(path, "spec.externalSecretSpec."); ok && kind == "ClusterExternalSecret" {
		candidates = append(candidates, candidate{"ExternalSecret", "spec." + rest})
	}
	if rest, ok := strings.CutPrefix(path, "spec.generator."); ok && kind == "ClusterGenerator" {
		// spec.generator.<member>.X is the member kind's spec.X.
		member, below, _ := strings.Cut(rest, ".")
		candidates = append(candidates, candidate{clusterGeneratorMembers[member], "spec." + below})
	}
	for _, c := range candidates {
		for _, key := range slices.Sorted(maps.Keys(upstreamExclusions)) {
			k, p, _ := strings.Cut(key, ":")
			if (k == "*" || k == c.kind) && coversPath(p, c.path) {
				return key, true
			}
		}
	}
	return "", false
}

// coversPath: path is pattern or below it; a "*" segment of pattern
// matches any one segment.
func coversPath(pattern, path string) bool {
	want, have := strings.Split(pattern, "."), strings.Split(path, ".")
	if len(have) < len(want) {
		return false
	}
	for i, w := range want {
		if w != "*" && w != have[i] {
			return false
		}
	}
	return true
}

// loadSpecSchema reads a CRD file and returns the schema of spec in its
// storage version, and the kind.
func loadSpecSchema(t *testing.T, file string) (apiextensionsv1.JSONSchemaProps, string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage && v.Served && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
			if !ok {
				t.Fatalf("%s: %s has no spec", file, v.Name)
			}
			return spec, crd.Spec.Names.Kind
		}
	}
	t.Fatalf("%s: no served storage version with a schema", file)
	return apiextensionsv1.JSONSchemaProps{}, ""
}
