package secrettemplate

import (
	"errors"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

var fetched = map[string][]byte{"user": []byte("app"), "password": []byte("s3cr3t"), "port": []byte("5432")}

func TestNoTemplateKeepsData(t *testing.T) {
	res, err := Render(nil, fetched, Sources{})
	if err != nil || !maps.EqualFunc(res.Data, fetched, func(a, b []byte) bool { return string(a) == string(b) }) || res.Type != corev1.SecretTypeOpaque {
		t.Fatalf("Render(nil) = %+v, %v", res, err)
	}
	res, err = Render(&esv1.ExternalSecretTemplate{Type: corev1.SecretTypeBasicAuth,
		Metadata: esv1.ExternalSecretTemplateMetadata{Labels: map[string]string{"app": "{{ .user }}"}}}, fetched, Sources{})
	if err != nil || len(res.Data) != 3 || res.Type != corev1.SecretTypeBasicAuth || res.Labels["app"] != "app" {
		t.Fatalf("metadata-only template changed the data: %+v, %v", res, err)
	}
}

func TestMergePolicies(t *testing.T) {
	tpl := &esv1.ExternalSecretTemplate{Data: map[string]string{
		"dsn":  "postgres://{{ .user }}:{{ .password }}@db:{{ .port }}/app",
		"user": "{{ .user | upper }}",
	}}
	res, err := Render(tpl, fetched, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || string(res.Data["dsn"]) != "postgres://app:s3cr3t@db:5432/app" || string(res.Data["user"]) != "APP" {
		t.Errorf("Replace: %q", res.Data)
	}
	tpl.MergePolicy = esv1.MergePolicyMerge
	res, err = Render(tpl, fetched, Sources{})
	if err != nil || len(res.Data) != 4 || string(res.Data["user"]) != "APP" || string(res.Data["password"]) != "s3cr3t" {
		t.Errorf("Merge: %q, %v", res.Data, err)
	}
}

func TestTemplateFrom(t *testing.T) {
	src := Sources{
		ConfigMaps: map[string]map[string]string{"tpl": {
			"config.yaml": "db:\n  user: {{ .user }}\n",
			"env":         "DB_USER: {{ .user }}\nDB_PORT: {{ .port | quote }}\n",
		}},
		Secrets: map[string]map[string][]byte{"tpl-secret": {"token": []byte("Bearer {{ .password }}")}},
	}
	tpl := &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{
		{ConfigMap: &esv1.TemplateRef{Name: "tpl", Items: []esv1.TemplateRefItem{
			{Key: "config.yaml"},
			{Key: "env", TemplateAs: esv1.TemplateScopeKeysAndValues},
		}}},
		{Secret: &esv1.TemplateRef{Name: "tpl-secret", Items: []esv1.TemplateRefItem{{Key: "token"}}}},
		{Literal: ptr.To("team: '{{ .user }}-team'"), Target: esv1.TemplateTargetLabels},
		{Literal: ptr.To("note: rendered"), Target: esv1.TemplateTargetAnnotations},
	}}
	res, err := Render(tpl, fetched, src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"config.yaml": "db:\n  user: app\n", "DB_USER": "app", "DB_PORT": "5432", "token": "Bearer s3cr3t"}
	if len(res.Data) != len(want) {
		t.Errorf("data keys = %d, want %d: %q", len(res.Data), len(want), res.Data)
	}
	for k, v := range want {
		if string(res.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, res.Data[k], v)
		}
	}
	if res.Labels["team"] != "app-team" || res.Annotations["note"] != "rendered" {
		t.Errorf("metadata targets: labels %v annotations %v", res.Labels, res.Annotations)
	}
}

func TestDangerousFunctionsAreAbsent(t *testing.T) {
	for _, name := range []string{
		"env", "expandenv", "getHostByName", // environment and network
		"now", "ago", "randAlphaNum", "randAlpha", "randNumeric", "randAscii", "randBytes", "randInt", "uuidv4",
		"genPrivateKey", "genCA", "genSelfSignedCert", "genSignedCert", "bcrypt", "shuffle", // random or time-dependent
		"lookup", "include", "tpl", "getSecret", "getConfigMap", // cluster or template access
	} {
		if _, ok := funcMap[name]; ok {
			t.Errorf("template function %q must not be available", name)
		}
		_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": "{{ " + name + " }}"}}, fetched, Sources{})
		if !errors.Is(err, ErrTemplate) {
			t.Errorf("a template calling %q rendered: %v", name, err)
		}
	}
	for _, name := range []string{"b64enc", "toJson", "fromJson", "sha256sum", "toYaml", "filterPEM", "upper", "default", "dict"} {
		if _, ok := funcMap[name]; !ok {
			t.Errorf("template function %q missing", name)
		}
	}
}

func TestErrorsDoNotEchoValues(t *testing.T) {
	for _, text := range []string{
		"{{ .password | mustFromJson }}", "{{ .password | b64dec | mustFromJson }}", "{{ .missing }}", "{{ semver .password }}",
		"{{ range .password }}{{ end }}", "{{ .password.field }}",
	} {
		_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{})
		if !errors.Is(err, ErrTemplate) {
			t.Fatalf("%s: error %v", text, err)
		}
		if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "s3") {
			t.Errorf("%s: error leaks the value: %v", text, err)
		}
	}
}

func TestFilterPEM(t *testing.T) {
	bundle := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"
	got, err := filterPEM("PRIVATE KEY", bundle)
	if err != nil || !strings.Contains(got, "PRIVATE KEY") || strings.Contains(got, "CERTIFICATE") {
		t.Errorf("filterPEM = %q, %v", got, err)
	}
	// As upstream: the type in any case; an absent type gives nothing, and
	// only text that is not PEM is an error.
	if got, err := filterPEM("private key", bundle); err != nil || got == "" || strings.Contains(got, "CERTIFICATE") {
		t.Errorf("filterPEM in lower case = %q, %v", got, err)
	}
	if got, err := filterPEM("RSA PRIVATE KEY", bundle); err != nil || got != "" {
		t.Errorf("filterPEM of an absent type = %q, %v; want empty", got, err)
	}
	if _, err := filterPEM("RSA PRIVATE KEY", "no PEM here"); err == nil {
		t.Error("filterPEM of text that is not PEM must fail")
	}
}

func TestDeterministic(t *testing.T) {
	tpl := &esv1.ExternalSecretTemplate{Data: map[string]string{
		"keys":   `{{ dict "e" 1 "a" 2 "c" 3 "b" 4 "d" 5 | keys | join "," }}`,
		"values": `{{ dict "e" 1 "a" 2 "c" 3 "b" 4 "d" 5 | values | toJson }}`,
		"date":   `{{ toDate "2006-01-02" "2026-11-20" | date "Jan 2, 2006" }}`,
	}}
	first, err := Render(tpl, fetched, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	if string(first.Data["keys"]) != "a,b,c,d,e" || string(first.Data["values"]) != "[2,4,3,5,1]" || string(first.Data["date"]) != "Nov 20, 2026" {
		t.Errorf("got %q", first.Data)
	}
	for range 20 {
		again, _ := Render(tpl, fetched, Sources{})
		if !maps.EqualFunc(first.Data, again.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
			t.Fatalf("rendering changed between runs: %q vs %q", first.Data, again.Data)
		}
	}
	for _, text := range []string{`{{ date "15:04" .user }}`, `{{ printf "%p" . }}`} {
		if _, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{}); !errors.Is(err, ErrTemplate) {
			t.Errorf("%s: rendered (%v); it would change at every refresh", text, err)
		}
	}
}

func TestBoundedOutput(t *testing.T) {
	for _, text := range []string{`{{ repeat 2000000000 "x" }}`, `{{ $s := repeat 4096 "xxxxxxxxxxxxxxxx" }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}{{ $s }}`} {
		if _, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": text}}, fetched, Sources{}); !errors.Is(err, ErrTemplate) {
			t.Errorf("%.40s...: %v, want a refusal", text, err)
		}
	}
}

func TestSpecTemplatesWinOverTemplateFrom(t *testing.T) {
	lit := "user: from-literal\nother: kept"
	res, err := Render(&esv1.ExternalSecretTemplate{
		Data:         map[string]string{"user": "from-data"},
		TemplateFrom: []esv1.TemplateFrom{{Literal: &lit}},
	}, fetched, Sources{})
	if err != nil || string(res.Data["user"]) != "from-data" || string(res.Data["other"]) != "kept" {
		t.Errorf("precedence: %q, %v", res.Data, err)
	}
}

// TestReplaceWithAnyTemplateFrom: as upstream, with mergePolicy Replace any
// templateFrom entry (even one writing only annotations) means the fetched
// data is not copied; only a template without data and templateFrom keeps it.
func TestReplaceWithAnyTemplateFrom(t *testing.T) {
	annotationsOnly := []esv1.TemplateFrom{{Literal: ptr.To("note: '{{ .user }}'"), Target: "annotations"}}
	res, err := Render(&esv1.ExternalSecretTemplate{TemplateFrom: annotationsOnly}, fetched, Sources{})
	if err != nil || len(res.Data) != 0 || res.Annotations["note"] != "app" {
		t.Errorf("Replace with an annotations-only templateFrom: data %q, annotations %v, %v", res.Data, res.Annotations, err)
	}
	res, err = Render(&esv1.ExternalSecretTemplate{TemplateFrom: annotationsOnly, MergePolicy: esv1.MergePolicyMerge}, fetched, Sources{})
	if err != nil || len(res.Data) != len(fetched) {
		t.Errorf("Merge: data %q, %v", res.Data, err)
	}
	res, err = Render(&esv1.ExternalSecretTemplate{Metadata: esv1.ExternalSecretTemplateMetadata{Labels: map[string]string{"a": "b"}}}, fetched, Sources{})
	if err != nil || len(res.Data) != len(fetched) {
		t.Errorf("metadata only: data %q, %v", res.Data, err)
	}
}

func TestValuesDecodingStrategy(t *testing.T) {
	for _, tc := range []struct {
		strategy esv1.DecodingStrategy
		value    string
		want     string
		fails    bool
	}{
		{"", "aGk=", "aGk=", false},
		{esv1.DecodingNone, "aGk=", "aGk=", false},
		{esv1.DecodingBase64, "aGk=", "hi", false},
		{esv1.DecodingBase64, "Pz8_", "", true},
		{esv1.DecodingBase64URL, "Pz8_", "???", false},
		{esv1.DecodingBase64URL, "Pz8/", "", true},
		{esv1.DecodingAuto, "aGk=", "hi", false},
		{esv1.DecodingAuto, "Pz8_", "???", false},
		{esv1.DecodingAuto, "plain words", "plain words", false},
	} {
		tpl := &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("k: '" + tc.value + "'"), ValuesDecodingStrategy: tc.strategy}}}
		res, err := Render(tpl, fetched, Sources{})
		if tc.fails {
			if !errors.Is(err, ErrTemplate) || strings.Contains(err.Error(), tc.value) {
				t.Errorf("%s %q: %v, want an error naming the key only", tc.strategy, tc.value, err)
			}
			continue
		}
		if err != nil || string(res.Data["k"]) != tc.want {
			t.Errorf("%s %q = %q, %v; want %q", tc.strategy, tc.value, res.Data["k"], err, tc.want)
		}
	}
}

func TestTemplateFromTargetAnyCase(t *testing.T) {
	for target, where := range map[esv1.TemplateTarget]string{"": "data", "data": "data", "DATA": "data", "labels": "labels", "Labels": "labels", "aNNOTATIONS": "annotations"} {
		res, err := Render(&esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("k: v"), Target: target}}}, fetched, Sources{})
		if err != nil {
			t.Fatalf("%q: %v", target, err)
		}
		got := map[string]bool{"data": string(res.Data["k"]) == "v", "labels": res.Labels["k"] == "v", "annotations": res.Annotations["k"] == "v"}
		for w, ok := range got {
			if ok != (w == where) {
				t.Errorf("target %q: wrote %s = %v", target, w, ok)
			}
		}
	}
	if _, err := Render(&esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("k: v"), Target: "type"}}}, fetched, Sources{}); !errors.Is(err, ErrTemplate) {
		t.Errorf("target type: %v, want refused", err)
	}
}
