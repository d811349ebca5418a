package pushsecret

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/secrettemplate"
)

func dataEntry(secretKey, remoteKey, property string) esv1alpha1.PushSecretData {
	return esv1alpha1.PushSecretData{Match: esv1alpha1.PushSecretMatch{SecretKey: secretKey,
		RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: remoteKey, Property: property}}}
}

func TestDesiredEntries(t *testing.T) {
	source := map[string][]byte{"db-host": []byte("h"), "db-port": []byte("5432"), "api": []byte("k"), "team_U0040_mail": []byte("m")}
	store := target{Kind: "SecretStore", Name: "vault", Labels: map[string]string{"tier": "gold"}}
	byName := &esv1alpha1.PushSecretStoreRef{Name: "vault"}
	cases := []struct {
		name string
		spec esv1alpha1.PushSecretSpec
		want map[string]string // remoteID → value
		err  string
		// missing: what the entries whose key the Secret lacks say; they
		// are set aside, the others planned.
		missing string
	}{
		{name: "one key, one property",
			spec: esv1alpha1.PushSecretSpec{Data: []esv1alpha1.PushSecretData{dataEntry("api", "app", "key")}},
			want: map[string]string{"app/key": "k"}},
		{name: "the whole Secret",
			spec: esv1alpha1.PushSecretSpec{Data: []esv1alpha1.PushSecretData{dataEntry("", "all", "")}},
			want: map[string]string{"all": `{"api":"k","db-host":"h","db-port":"5432","team_U0040_mail":"m"}`}},
		{name: "a key the Secret lacks is set aside, the others planned",
			spec: esv1alpha1.PushSecretSpec{Data: []esv1alpha1.PushSecretData{dataEntry("nope", "x", ""), dataEntry("api", "app", "")}},
			want: map[string]string{"app": "k"}, missing: `data[0]: invalid push entry: the Secret has no key "nope"`},
		{name: "a key the Secret lacks still counts as a remote secret",
			spec: esv1alpha1.PushSecretSpec{Data: []esv1alpha1.PushSecretData{dataEntry("nope", "x", ""), dataEntry("api", "x", "")}},
			err:  "two entries push to x"},
		{name: "two entries to one remote secret",
			spec: esv1alpha1.PushSecretSpec{Data: []esv1alpha1.PushSecretData{dataEntry("api", "x", ""), dataEntry("db-host", "x", "")}},
			err:  "two entries push to x"},
		{name: "ReverseUnicode",
			spec: esv1alpha1.PushSecretSpec{Data: []esv1alpha1.PushSecretData{{ConversionStrategy: esv1alpha1.ConversionReverseUnicode,
				Match: esv1alpha1.PushSecretMatch{SecretKey: "team@mail", RemoteRef: esv1alpha1.PushSecretRemoteRef{RemoteKey: "mail"}}}}},
			want: map[string]string{"mail": "m"}},
		{name: "dataTo: matching keys, rewritten, data winning",
			spec: esv1alpha1.PushSecretSpec{
				Data: []esv1alpha1.PushSecretData{dataEntry("db-host", "custom/host", "")},
				DataTo: []esv1alpha1.PushSecretDataTo{{StoreRef: byName, Match: &esv1alpha1.PushSecretDataToMatch{RegExp: "^db-"},
					Rewrite: []esv1alpha1.PushSecretRewrite{
						{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: "^db-", Target: ""}},
						{Transform: &esv1.ExternalSecretRewriteTransform{Template: "prod/{{ .value | upper }}"}}}}}},
			want: map[string]string{"custom/host": "h", "prod/PORT": "5432"}},
		{name: "dataTo: bundled into one remote key",
			spec: esv1alpha1.PushSecretSpec{DataTo: []esv1alpha1.PushSecretDataTo{{StoreRef: byName, RemoteKey: "db",
				Match: &esv1alpha1.PushSecretDataToMatch{RegExp: "^db-"}}}},
			want: map[string]string{"db": `{"db-host":"h","db-port":"5432"}`}},
		{name: "dataTo for another store",
			spec: esv1alpha1.PushSecretSpec{DataTo: []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "aws"}}}},
			want: map[string]string{}},
		{name: "dataTo by store labels",
			spec: esv1alpha1.PushSecretSpec{DataTo: []esv1alpha1.PushSecretDataTo{{Match: &esv1alpha1.PushSecretDataToMatch{RegExp: "^api$"},
				StoreRef: &esv1alpha1.PushSecretStoreRef{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}}}},
			want: map[string]string{"api": "k"}},
		{name: "dataTo renaming two keys to one",
			spec: esv1alpha1.PushSecretSpec{DataTo: []esv1alpha1.PushSecretDataTo{{StoreRef: byName,
				Rewrite: []esv1alpha1.PushSecretRewrite{{Regexp: &esv1.ExternalSecretRewriteRegexp{Source: ".*", Target: "one"}}}}}},
			err: "renamed to \"one\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := newPlanner(&tc.spec, source, secrettemplate.NewBudget())
			got, err := plan.entries(store)
			if err == nil {
				err = plan.build(map[string]map[string]entry{store.key(): got})
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, errBadEntry) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "5432") {
					t.Fatalf("the error shows a value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (plan.missingKeys == nil) != (tc.missing == "") || (tc.missing != "" && plan.missingKeys.Error() != tc.missing) {
				t.Errorf("missing keys %v, want %q", plan.missingKeys, tc.missing)
			}
			values := map[string]string{}
			for id, e := range got {
				if e.missing {
					continue
				}
				values[id] = string(e.value)
				if id != remoteID(e.data.Match.RemoteRef) {
					t.Errorf("entry %s records remote %s", id, remoteID(e.data.Match.RemoteRef))
				}
			}
			if !maps.Equal(values, tc.want) {
				t.Errorf("entries %v, want %v", slices.Sorted(maps.Keys(values)), slices.Sorted(maps.Keys(tc.want)))
			}
		})
	}
}

// TestDropped: what left the spec is deleted, what stayed is not, and a
// remote secret a store over the same backend still pushes is kept.
func TestDropped(t *testing.T) {
	rec := func(ids ...string) map[string]esv1alpha1.PushSecretData {
		m := map[string]esv1alpha1.PushSecretData{}
		for _, id := range ids {
			m[id] = dataEntry("", id, "")
		}
		return m
	}
	old := esv1alpha1.SyncedPushSecretsMap{
		"SecretStore/a":    rec("kept", "left"),
		"SecretStore/gone": rec("x"),
		"SecretStore/old":  rec("shared", "only-old"),
	}
	now := map[string]synced{"SecretStore/a": synced(rec("kept")), "SecretStore/twin": synced(rec("shared"))}
	backends := map[string]string{"SecretStore/a": "vault-1", "SecretStore/old": "vault-2", "SecretStore/twin": "vault-2"}
	var got []string
	for _, d := range dropped(old, now, backends) {
		got = append(got, d.storeKey+":"+d.id)
	}
	want := []string{"SecretStore/a:left", "SecretStore/gone:x", "SecretStore/old:only-old"}
	if !slices.Equal(got, want) {
		t.Errorf("dropped %v, want %v", got, want)
	}
}

// TestValuesAreBuiltOnce: a whole-Secret value is made once per sync,
// however many entries and stores push it, so 150 entries to 16 stores of
// a 3 MB Secret cost 3 MB of the budget, not 7 GB; a second conversion
// strategy or a dataTo bundle is another value, charged before it is made.
func TestValuesAreBuiltOnce(t *testing.T) {
	source := map[string][]byte{"k": []byte(strings.Repeat("x", 3<<20))}
	spec := esv1alpha1.PushSecretSpec{}
	for i := range 150 {
		spec.Data = append(spec.Data, dataEntry("", "whole-"+strconv.Itoa(i), ""))
	}
	plan := newPlanner(&spec, source, secrettemplate.NewBudget())
	planned := map[string]map[string]entry{}
	for i := range 16 {
		store := target{Kind: "SecretStore", Name: "s" + strconv.Itoa(i)}
		entries, err := plan.entries(store)
		if err != nil {
			t.Fatal(err)
		}
		planned[store.key()] = entries
	}
	if err := plan.build(planned); err != nil {
		t.Fatalf("2,400 entries of one value: %v", err)
	}
	var first *byte
	for _, entries := range planned {
		for id, e := range entries {
			if len(e.value) != 3<<20+8 {
				t.Fatalf("%s holds %d bytes", id, len(e.value))
			}
			if first == nil {
				first = &e.value[0]
			} else if &e.value[0] != first {
				t.Fatalf("%s holds a copy of its own", id)
			}
		}
	}

	// Three bundles of the same keys are three values: 9 MB, past the budget.
	spec = esv1alpha1.PushSecretSpec{}
	for _, remote := range []string{"a", "b", "c"} {
		spec.DataTo = append(spec.DataTo, esv1alpha1.PushSecretDataTo{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "s"}, RemoteKey: remote})
	}
	plan = newPlanner(&spec, source, secrettemplate.NewBudget())
	entries, err := plan.entries(target{Kind: "SecretStore", Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.build(map[string]map[string]entry{"SecretStore/s": entries}); !errors.Is(err, secrettemplate.ErrBudget) {
		t.Fatalf("three 3 MB bundles: %v, want the budget refused", err)
	}
}
