// Package provcerts issues the certificates core and an eso provider process
// need to talk mTLS, for clusters without cert-manager: a CA, a server
// certificate for the provider's Service names and a client certificate for
// core, each in a Secret of type kubernetes.io/tls (tls.crt, tls.key, ca.crt
// — the layout cert-manager writes, so either can be used), renewed well
// before it expires. A renewed CA is trusted alongside the previous one until
// the previous one expires, so rotation never breaks a connection.
package provcerts

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eso-dev/eso/providers/plugin/wire"
)

// Config says which Secrets to keep and for which names.
type Config struct {
	// Namespace of the three Secrets.
	Namespace string
	// CASecret, ServerSecret and ClientSecret name them.
	CASecret, ServerSecret, ClientSecret string
	// DNSNames of the provider's Service, e.g. eso-provider.eso-system.svc.
	DNSNames []string
	// CAValidity and LeafValidity are certificate lifetimes; each is renewed
	// once two thirds of it have passed.
	CAValidity, LeafValidity time.Duration
}

// CoreClientSecret is the default name of core's own client certificate
// Secret: the identity core calls provider processes with when a store or
// generator names no certificate of its own.
const CoreClientSecret = "eso-provider-client-tls"

// Defaults fills in what Config leaves out.
func (c Config) withDefaults() Config {
	if c.CASecret == "" {
		c.CASecret = "eso-provider-ca"
	}
	if c.ServerSecret == "" {
		c.ServerSecret = "eso-provider-server-tls"
	}
	if c.ClientSecret == "" {
		c.ClientSecret = CoreClientSecret
	}
	if c.CAValidity == 0 {
		c.CAValidity = 3 * 365 * 24 * time.Hour
	}
	if c.LeafValidity == 0 {
		c.LeafValidity = 90 * 24 * time.Hour
	}
	return c
}

// Issuer keeps the Secrets of Config current.
type Issuer struct {
	// Client writes the Secrets; Reader reads them (eso's cache holds only
	// the Secrets it syncs, so this is the API reader).
	Client client.Client
	Reader client.Reader
	Config Config
	Now    func() time.Time
}

// Ensure creates or renews what needs it and returns when it must run again.
func (i *Issuer) Ensure(ctx context.Context) (time.Duration, error) {
	cfg := i.Config.withDefaults()
	now := i.Now()
	ca, bundle, err := i.ensureCA(ctx, cfg, now)
	if err != nil {
		return 0, err
	}
	next := renewAt(ca.cert).Sub(now)
	for _, leaf := range []struct {
		name   string
		server bool
	}{{cfg.ServerSecret, true}, {cfg.ClientSecret, false}} {
		cert, err := i.ensureLeaf(ctx, cfg, leaf.name, leaf.server, ca, bundle, now)
		if err != nil {
			return 0, err
		}
		next = min(next, renewAt(cert).Sub(now))
	}
	return max(next, time.Minute), nil
}

// renewAt is when a certificate is due: two thirds into its life.
func renewAt(c *x509.Certificate) time.Time {
	life := c.NotAfter.Sub(c.NotBefore)
	return c.NotBefore.Add(life * 2 / 3)
}

type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// ensureCA returns the current CA and the bundle to trust: the current CA
// plus the previous one while it is still valid.
func (i *Issuer) ensureCA(ctx context.Context, cfg Config, now time.Time) (*keyPair, []byte, error) {
	secret, err := i.get(ctx, cfg.Namespace, cfg.CASecret)
	if err != nil {
		return nil, nil, err
	}
	if secret != nil {
		if ca, err := parsePair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]); err == nil && now.Before(renewAt(ca.cert)) {
			return ca, secret.Data["ca.crt"], nil
		}
	}
	ca, err := newCA(cfg, now)
	if err != nil {
		return nil, nil, err
	}
	bundle := ca.pem
	if secret != nil {
		bundle = append(bundle, stillValid(secret.Data[corev1.TLSCertKey], now)...)
	}
	keyPEM, err := encodeKey(ca.key)
	if err != nil {
		return nil, nil, err
	}
	data := map[string][]byte{corev1.TLSCertKey: ca.pem, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": bundle}
	return ca, bundle, i.put(ctx, cfg.Namespace, cfg.CASecret, secret, data)
}

// ensureLeaf keeps one leaf Secret signed by ca and carrying bundle.
func (i *Issuer) ensureLeaf(ctx context.Context, cfg Config, name string, server bool, ca *keyPair, bundle []byte, now time.Time) (*x509.Certificate, error) {
	secret, err := i.get(ctx, cfg.Namespace, name)
	if err != nil {
		return nil, err
	}
	if secret != nil && bytes.Equal(secret.Data["ca.crt"], bundle) {
		if leaf, err := parsePair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]); err == nil &&
			now.Before(renewAt(leaf.cert)) && leaf.cert.CheckSignatureFrom(ca.cert) == nil &&
			(!server || slices.Equal(leaf.cert.DNSNames, cfg.DNSNames)) &&
			(server || wire.IdentityOf(leaf.cert).Core) {
			return leaf.cert, nil
		}
	}
	leaf, err := newLeaf(cfg, server, ca, now)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(leaf.key)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{corev1.TLSCertKey: leaf.pem, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": bundle}
	return leaf.cert, i.put(ctx, cfg.Namespace, name, secret, data)
}

func (i *Issuer) get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	err := i.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
	}
	return &s, nil
}

// put writes data into the Secret, creating it if needed. A Secret someone
// else made (no managed-by label) is never overwritten.
func (i *Issuer) put(ctx context.Context, namespace, name string, existing *corev1.Secret, data map[string][]byte) error {
	if existing == nil {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{labelManagedBy: managedByValue}},
			Type:       corev1.SecretTypeTLS,
			Data:       data,
		}
		return i.Client.Create(ctx, s)
	}
	if existing.Labels[labelManagedBy] != managedByValue {
		return fmt.Errorf("%w: Secret %s/%s", ErrNotOurs, namespace, name)
	}
	existing.Data = data
	return i.Client.Update(ctx, existing)
}

// ErrNotOurs: a Secret of the configured name exists and eso did not make it
// (e.g. cert-manager manages it): eso leaves it alone.
var ErrNotOurs = errors.New("certificate Secret exists and was not issued by eso; leaving it alone")

const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedByValue = "eso-provider-certificates"
)

func newCA(cfg Config, now time.Time) (*keyPair, error) {
	tpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "eso provider CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(cfg.CAValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	return sign(tpl, nil)
}

func newLeaf(cfg Config, server bool, ca *keyPair, now time.Time) (*keyPair, error) {
	tpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "eso-core"},
		NotBefore:   now.Add(-time.Minute),
		NotAfter:    minTime(now.Add(cfg.LeafValidity), ca.cert.NotAfter),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		// Core's identity: a provider process lets it act for any namespace.
		URIs: []*url.URL{wire.CoreURI()},
	}
	if server {
		tpl.Subject.CommonName = "eso-provider"
		tpl.DNSNames = cfg.DNSNames
		tpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tpl.URIs = nil
	}
	return sign(tpl, ca)
}

// sign makes a key and a certificate from tpl, signed by parent (nil: self-signed).
func sign(tpl *x509.Certificate, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if tpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
		return nil, err
	}
	signer, issuer := key, tpl
	if parent != nil {
		signer, issuer = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, issuer, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func parsePair(certPEM, keyPEM []byte) (*keyPair, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("no PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, pem: certPEM}, nil
}

// stillValid returns certPEM if its certificate has not expired, else nothing.
func stillValid(certPEM []byte, now time.Time) []byte {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return nil
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil || now.After(c.NotAfter) {
		return nil
	}
	return certPEM
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Start keeps the certificates current until ctx ends (a manager Runnable).
func (i *Issuer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("provider-certificates")
	for {
		next, err := i.Ensure(ctx)
		if err != nil {
			log.Error(err, "keeping the provider certificates current")
			next = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// NeedLeaderElection: only the leader issues, so replicas do not race.
func (i *Issuer) NeedLeaderElection() bool { return true }
