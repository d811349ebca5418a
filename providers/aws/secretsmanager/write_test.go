package secretsmanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/aws/awstest"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestWritesOnlyTouchManagedSecrets runs against moto_server: eso creates,
// updates and deletes the secrets it tagged, and refuses any other.
func TestWritesOnlyTouchManagedSecrets(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	seed := seedClient(endpoint)
	if _, err := seed.CreateSecret(ctx, &sm.CreateSecretInput{Name: aws.String("theirs"), SecretString: aws.String("precious")}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, staticSpec(endpoint))
	w := c.(plugin.Writer)
	if c.Capabilities() != plugin.ReadWrite {
		t.Errorf("capabilities = %s", c.Capabilities())
	}
	read := func(key, property string) string {
		t.Helper()
		v, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: key, Property: property})
		if err != nil {
			t.Fatalf("reading %s: %v", key, err)
		}
		return string(v)
	}

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v1")}))
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v2")}))
	if got := read("mine", ""); got != "v2" {
		t.Errorf("pushed value = %q", got)
	}
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Property: "a", Value: []byte("1")}))
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "obj", Property: "b", Value: []byte("2")}))
	if read("obj", "a") != "1" || read("obj", "b") != "2" {
		t.Errorf("property pushes did not merge: %s", read("obj", ""))
	}
	if ok, err := w.SecretExists(ctx, "mine"); !ok || err != nil {
		t.Errorf("SecretExists(mine) = %v, %v", ok, err)
	}

	// Someone else's secret: never overwritten, never deleted.
	if err := w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "theirs", Value: []byte("overwrite")}); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("push over an unmanaged secret: %v", err)
	}
	if err := w.DeleteSecret(ctx, "theirs", ""); !errors.Is(err, plugin.ErrNotManaged) {
		t.Errorf("delete of an unmanaged secret: %v", err)
	}
	if got := read("theirs", ""); got != "precious" {
		t.Errorf("unmanaged secret changed: %q", got)
	}

	must(w.DeleteSecret(ctx, "obj", "a"))
	if got := read("obj", ""); got != `{"b":"2"}` {
		t.Errorf("after deleting a property: %s", got)
	}
	must(w.DeleteSecret(ctx, "mine", ""))
	if ok, err := w.SecretExists(ctx, "mine"); ok || err != nil {
		t.Errorf("deleted secret: exists %v, %v", ok, err)
	}
	must(w.DeleteSecret(ctx, "never-existed", ""))
	must(w.DeleteSecret(ctx, "mine", "")) // already scheduled for deletion: nothing to do
	must(w.PushSecret(ctx, plugin.PushRequest{RemoteKey: "mine", Value: []byte("v3")}))
	if got := read("mine", ""); got != "v3" {
		t.Errorf("re-pushed after deletion = %q", got)
	}
}

// TestConcurrentPropertyPushesKeepEveryField: pushes of different properties
// of one secret, from two clients at once, all survive.
func TestConcurrentPropertyPushesKeepEveryField(t *testing.T) {
	ctx := context.Background()
	endpoint := awstest.StartMoto(t)
	var writers []plugin.Writer
	for range 2 {
		writers = append(writers, newClient(t, staticSpec(endpoint)).(plugin.Writer))
	}
	if err := writers[0].PushSecret(ctx, plugin.PushRequest{RemoteKey: "shared", Value: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := plugin.PushRequest{RemoteKey: "shared", Property: fmt.Sprintf("field%d", i), Value: []byte("v")}
			if err := writers[i%2].PushSecret(ctx, req); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	fields, err := newClient(t, staticSpec(endpoint)).GetSecretMap(ctx, esv1.ExternalSecretDataRemoteRef{Key: "shared"})
	if err != nil || len(fields) != 12 {
		t.Fatalf("%d of 12 fields survived (%v)", len(fields), err)
	}
}
