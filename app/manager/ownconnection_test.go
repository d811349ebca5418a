package manager

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestOwnConnection: a client built with ownConnection opens a connection
// of its own, where clients of one configuration otherwise share one.
func TestOwnConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"34"}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	rc := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}}

	ask := func(c *rest.Config) {
		t.Helper()
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(context.Background()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	ask(rc)
	ask(rest.CopyConfig(rc))
	if n := conns.Load(); n != 1 {
		t.Fatalf("two clients of one configuration opened %d connections, want them to share 1", n)
	}
	ask(ownConnection(rc))
	if n := conns.Load(); n != 2 {
		t.Fatalf("after a client with its own connection: %d connections, want 2", n)
	}
}
