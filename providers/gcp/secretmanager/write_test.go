package secretmanager

import (
	"context"
	"errors"
	"strings"
	"testing"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/gcp/gcptest"
	"github.com/eso-dev/eso/providers/plugin"
)

var managed = map[string]string{plugin.ManagedByKey: plugin.ManagedByValue}

// TestWritesOnlyTouchManagedSecrets: eso creates, updates and deletes the
// secrets it labelled, and refuses any other.
func TestWritesOnlyTouchManagedSecrets(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	w := c.(plugin.Writer)
	if c.Capabilities() != plugin.ReadWrite {
		t.Errorf("capabilities = %s", c.Capabilities())
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(key string) string {
		t.Helper()
		v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key})
		must(err)
		return string(v)
	}
	versions := func(key string) int {
		_, n, _ := srv.Latest("projects/p/secrets/" + key)
		return n
	}
	srv.Add("projects/p/secrets/theirs", []byte("precious"), map[string]string{"team": "other"})

	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v1")}))
	created, _ := srv.Secret("projects/p/secrets/mine")
	if created.GetLabels()[plugin.ManagedByKey] != plugin.ManagedByValue || created.GetReplication().GetAutomatic() == nil {
		t.Errorf("created secret: labels %v, replication %v", created.GetLabels(), created.GetReplication())
	}
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v1")}))
	if n := versions("mine"); n != 1 {
		t.Errorf("pushing an unchanged value added a version: %d versions", n)
	}
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v2")}))
	if got, n := read("mine"), versions("mine"); got != "v2" || n != 2 {
		t.Errorf("after a change: %q with %d versions", got, n)
	}

	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Property: "a", Value: []byte("1")}))
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Property: "b", Value: []byte("2")}))
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Property: "b", Value: []byte("2")}))
	if got, n := read("obj"), versions("obj"); got != `{"a":"1","b":"2"}` || n != 2 {
		t.Errorf("property pushes: %s with %d versions", got, n)
	}
	if ok, err := w.SecretExists(ctx, "mine"); !ok || err != nil {
		t.Errorf("SecretExists(mine) = %v, %v", ok, err)
	}
	if ok, err := w.SecretExists(ctx, "nope"); ok || err != nil {
		t.Errorf("SecretExists(nope) = %v, %v", ok, err)
	}

	// Someone else's secret: never overwritten, never deleted.
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "theirs", Value: []byte("overwrite")}); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("push over an unmanaged secret: %v", err)
	}
	if err := w.DeleteSecret(ctx, "theirs", ""); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("delete of an unmanaged secret: %v", err)
	}
	if err := w.DeleteSecret(ctx, "theirs", "x"); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("property delete on an unmanaged secret: %v", err)
	}
	if got, n := read("theirs"), versions("theirs"); got != "precious" || n != 1 {
		t.Errorf("unmanaged secret changed: %q, %d versions", got, n)
	}

	must(w.DeleteSecret(ctx, "obj", "a"))
	if got := read("obj"); got != `{"b":"2"}` {
		t.Errorf("after deleting a property: %s", got)
	}
	must(w.DeleteSecret(ctx, "obj", "a")) // already gone: no new version
	if n := versions("obj"); n != 3 {
		t.Errorf("deleting an absent property added a version: %d versions", n)
	}
	must(w.DeleteSecret(ctx, "obj", "b")) // the last field: the secret goes, as on AWS
	if _, ok := srv.Secret("projects/p/secrets/obj"); ok {
		t.Error("deleting the last property kept the secret")
	}
	must(w.DeleteSecret(ctx, "mine", ""))
	if ok, err := w.SecretExists(ctx, "mine"); ok || err != nil {
		t.Errorf("deleted secret: exists %v, %v", ok, err)
	}
	must(w.DeleteSecret(ctx, "mine", "")) // absent: nothing to do
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v3")}))
	if got := read("mine"); got != "v3" {
		t.Errorf("re-pushed after deletion = %q", got)
	}
}

// TestDeleteRefusesASecretChangedSinceRead: the delete carries the etag eso
// read with the label, so a secret relabelled meanwhile (no longer eso's)
// is not deleted.
func TestDeleteRefusesASecretChangedSinceRead(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	srv.Add("projects/p/secrets/mine", []byte("v1"), managed)
	srv.BeforeNext("DeleteSecret", func() { srv.SetLabels("projects/p/secrets/mine", map[string]string{"owner": "someone-else"}) })
	err := c.(plugin.Writer).DeleteSecret(ctx, "mine", "")
	if err == nil || !strings.Contains(err.Error(), "etag") {
		t.Errorf("delete after a concurrent change: %v", err)
	}
	if _, ok := srv.Secret("projects/p/secrets/mine"); !ok {
		t.Error("the changed secret was deleted")
	}
}

// TestPushComparesWithNewestEnabledVersion: "latest" may be disabled; the
// newest enabled version is what a push compares with and merges into.
func TestPushComparesWithNewestEnabledVersion(t *testing.T) {
	ctx := context.Background()
	srv, c := newClient(t)
	name := "projects/p/secrets/obj"
	srv.Add(name, []byte(`{"a":"1"}`), managed)
	srv.Add(name, []byte(`{"a":"bad"}`), nil)
	srv.Disable(name, 2)
	w := c.(plugin.Writer)
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Property: "b", Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if got, n, _ := srv.Latest(name); string(got) != `{"a":"1","b":"2"}` || n != 3 {
		t.Errorf("push merged into %s (%d versions), want the newest enabled version", got, n)
	}
	srv.Disable(name, 3)
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Value: []byte(`{"a":"1"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, n, _ := srv.Latest(name); n != 3 {
		t.Errorf("pushing the newest enabled value added a version: %d versions", n)
	}
}

// TestRegionalSecretsAreCreatedInTheirLocation: regional secrets take no
// replication policy (the server refuses one).
func TestRegionalSecretsAreCreatedInTheirLocation(t *testing.T) {
	ctx := context.Background()
	srv, opts := gcptest.Start(t)
	c := connect(t, newProvider(t, provv1.GCPSecretManagerSpec{ProjectID: "p", Location: "europe-west1"}, opts))
	if err := c.(plugin.Writer).PushSecret(ctx, plugin.PushRequest{RemoteKey: "regional", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if got, n, ok := srv.Latest("projects/p/locations/europe-west1/secrets/regional"); !ok || string(got) != "v" || n != 1 {
		t.Errorf("regional secret: %q, %d versions, exists %v", got, n, ok)
	}
	if v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: "regional"}); err != nil || string(v) != "v" {
		t.Errorf("reading it back: %q, %v", v, err)
	}
}
