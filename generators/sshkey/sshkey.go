// Package sshkey generates SSH key pairs (RSA, ECDSA, Ed25519) with the
// standard library and golang.org/x/crypto/ssh: no SDK, in every build.
package sshkey

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// Output keys, as upstream's.
const (
	PrivateKey = "privateKey"
	PublicKey  = "publicKey"
)

// Registration wires the generator into every binary. A key pair has no
// state: there is nothing to revoke.
var Registration = plugin.Definition[*genv1.SSHKey]{
	Name: "ssh-key", Kind: "SSHKey",
	Check: func(cfg *genv1.SSHKey) error {
		_, err := newKey(cfg.Spec, nil)
		return err
	},
	Generate: func(ctx context.Context, _ plugin.Deps, cfg *genv1.SSHKey, _ plugin.Scope) (map[string][]byte, plugin.State, error) {
		values, err := Generate(ctx, cfg.Spec)
		return values, nil, err
	},
}.Registration()

// rsaSlots lets one RSA key be generated at a time in the process: an
// RSA-4096 key takes about 0.6 s of CPU (over a second at worst), and one
// ExternalSecret may ask for 64 of them at every refresh, so without it a
// few tenants could take every core. Waiters give up with their sync's
// context.
var rsaSlots = make(chan struct{}, 1)

// Generate makes a key pair as spec says: privateKey in OpenSSH's PEM
// format, publicKey one authorized_keys line, both carrying the comment.
func Generate(ctx context.Context, spec genv1.SSHKeySpec) (map[string][]byte, error) {
	if t := genv1.SSHKeyType(strings.ToLower(string(spec.KeyType))); t == "" || t == genv1.SSHKeyRSA {
		select {
		case rsaSlots <- struct{}{}:
			defer func() { <-rsaSlots }()
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting to generate an RSA key: %w", ctx.Err())
		}
	}
	key, err := newKey(spec, rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(key, spec.Comment)
	if err != nil {
		return nil, fmt.Errorf("encoding the private key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return nil, fmt.Errorf("deriving the public key: %w", err)
	}
	public := ssh.MarshalAuthorizedKey(signer.PublicKey())
	if spec.Comment != "" {
		public = append(public[:len(public)-1], " "+spec.Comment+"\n"...)
	}
	return map[string][]byte{PrivateKey: pem.EncodeToMemory(block), PublicKey: public}, nil
}

// newKey makes the private key spec describes from random, or with a nil
// random only checks that spec describes one. Sizes outside upstream's
// documented ones are refused: an RSA key past 4096 bits costs seconds of
// CPU per generation, and an unknown ECDSA size is not silently P-256.
func newKey(spec genv1.SSHKeySpec, random interface{ Read([]byte) (int, error) }) (crypto.Signer, error) {
	size := func(def int) int {
		if spec.KeySize == nil {
			return def
		}
		return *spec.KeySize
	}
	switch genv1.SSHKeyType(strings.ToLower(string(spec.KeyType))) {
	case "", genv1.SSHKeyRSA:
		bits := size(2048)
		if bits != 2048 && bits != 3072 && bits != 4096 {
			return nil, fmt.Errorf("%w: an rsa keySize is 2048, 3072 or 4096, not %d", plugin.ErrInvalidConfig, bits)
		}
		if random == nil {
			return nil, nil
		}
		return rsa.GenerateKey(random, bits)
	case genv1.SSHKeyECDSA:
		curves := map[int]elliptic.Curve{256: elliptic.P256(), 384: elliptic.P384(), 521: elliptic.P521()}
		curve, ok := curves[size(256)]
		if !ok {
			return nil, fmt.Errorf("%w: an ecdsa keySize is 256, 384 or 521, not %d", plugin.ErrInvalidConfig, size(256))
		}
		if random == nil {
			return nil, nil
		}
		return ecdsa.GenerateKey(curve, random)
	case genv1.SSHKeyEd25519:
		if random == nil {
			return nil, nil
		}
		_, key, err := ed25519.GenerateKey(random)
		return key, err
	default:
		return nil, fmt.Errorf("%w: keyType %q (want rsa, ecdsa or ed25519)", plugin.ErrInvalidConfig, spec.KeyType)
	}
}
