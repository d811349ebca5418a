package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// TLSFiles are the PEM files the server's identity and its trust in clients
// come from, typically a mounted Secret that cert-manager or core rotates.
type TLSFiles struct {
	CertFile     string
	KeyFile      string
	ClientCAFile string
}

// DefaultReloadInterval is how often a handshake may re-read the TLS files:
// often enough that a rotated Secret takes effect within seconds, rarely
// enough that a burst of connections costs no disk reads.
const DefaultReloadInterval = 5 * time.Second

// NewServerTLSConfig returns the server's mTLS configuration: TLS 1.2 or
// newer, a client certificate required and verified against the client CA
// bundle. The files are read now (an error if any is missing or invalid) and
// re-read at most every interval on a handshake; a change applies to new
// connections without restart. Files that change but do not parse (e.g. a
// certificate written before its key) are ignored until they do, so a
// rotation in progress never breaks serving.
func NewServerTLSConfig(files TLSFiles, interval time.Duration, log logr.Logger) (*tls.Config, error) {
	r := &certReloader{files: files, interval: interval, log: log, now: time.Now}
	if err := r.load(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequireAndVerifyClientCert,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.config(), nil
		},
	}, nil
}

// certReloader holds the last good TLS configuration and the file contents it
// was built from.
type certReloader struct {
	files    TLSFiles
	interval time.Duration
	log      logr.Logger
	now      func() time.Time

	mu      sync.Mutex
	current *tls.Config
	loaded  [3][]byte
	checked time.Time
	// rejected is the content last refused, so a half-written rotation is
	// logged once, not on every handshake.
	rejected [3][]byte
}

// config returns the configuration for a new connection, reloading the files
// first if they were last checked more than interval ago.
func (r *certReloader) config() *tls.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.now().Sub(r.checked) >= r.interval {
		if err := r.reloadLocked(); err != nil {
			r.log.Error(err, "keeping the previous TLS material")
		}
	}
	return r.current
}

func (r *certReloader) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked()
}

// reloadLocked reads the files and, when they changed and parse, replaces the
// configuration. The caller holds r.mu.
func (r *certReloader) reloadLocked() error {
	r.checked = r.now()
	var raw [3][]byte
	for i, path := range []string{r.files.CertFile, r.files.KeyFile, r.files.ClientCAFile} {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading TLS material: %w", err)
		}
		raw[i] = b
	}
	if r.current != nil && sameContent(raw, r.loaded) {
		return nil
	}
	cfg, err := buildTLSConfig(raw[0], raw[1], raw[2])
	if err != nil {
		if sameContent(raw, r.rejected) {
			return nil
		}
		r.rejected = raw
		return fmt.Errorf("TLS material from %s, %s and %s: %w", r.files.CertFile, r.files.KeyFile, r.files.ClientCAFile, err)
	}
	if r.current != nil {
		r.log.Info("TLS material reloaded", "certFile", r.files.CertFile, "clientCAFile", r.files.ClientCAFile)
	}
	r.current, r.loaded, r.rejected = cfg, raw, [3][]byte{}
	return nil
}

func sameContent(a, b [3][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// buildTLSConfig is the configuration one connection is served with.
func buildTLSConfig(certPEM, keyPEM, caPEM []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error names the problem (mismatch, bad PEM), never key material.
		return nil, fmt.Errorf("server certificate and key: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("client CA bundle holds no PEM certificate")
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		Certificates: []tls.Certificate{cert},
		// Returned from GetConfigForClient, so gRPC's own ALPN setting on the
		// outer configuration does not apply here.
		NextProtos: []string{"h2"},
	}, nil
}
