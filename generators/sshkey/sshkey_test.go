package sshkey

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"k8s.io/utils/ptr"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestGenerateMakesMatchingPairs: each type and size gives an OpenSSH
// private key that parses, of that type and size, whose public half is
// the publicKey line, with the comment in both.
func TestGenerateMakesMatchingPairs(t *testing.T) {
	cases := []struct {
		spec    genv1.SSHKeySpec
		algo    string
		bits    int
		comment string
	}{
		{genv1.SSHKeySpec{}, ssh.KeyAlgoRSA, 2048, ""},
		{genv1.SSHKeySpec{KeyType: genv1.SSHKeyRSA, KeySize: ptr.To(3072), Comment: "ci@edge"}, ssh.KeyAlgoRSA, 3072, "ci@edge"},
		{genv1.SSHKeySpec{KeyType: genv1.SSHKeyECDSA}, ssh.KeyAlgoECDSA256, 256, ""},
		{genv1.SSHKeySpec{KeyType: genv1.SSHKeyECDSA, KeySize: ptr.To(384)}, ssh.KeyAlgoECDSA384, 384, ""},
		{genv1.SSHKeySpec{KeyType: genv1.SSHKeyECDSA, KeySize: ptr.To(521), Comment: "deploy key"}, ssh.KeyAlgoECDSA521, 521, "deploy key"},
		// Ed25519 has one size: keySize is ignored, as upstream.
		{genv1.SSHKeySpec{KeyType: genv1.SSHKeyEd25519, KeySize: ptr.To(4096), Comment: "user@example.com"}, ssh.KeyAlgoED25519, 256, "user@example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.algo+"-"+tc.comment, func(t *testing.T) {
			values, err := Generate(context.Background(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(values) != 2 {
				t.Fatalf("keys %v, want exactly privateKey and publicKey", values)
			}
			private := string(values[PrivateKey])
			if !strings.HasPrefix(private, "-----BEGIN OPENSSH PRIVATE KEY-----\n") {
				t.Fatalf("private key not in OpenSSH format: %.40q", private)
			}
			raw, err := ssh.ParseRawPrivateKey(values[PrivateKey])
			if err != nil {
				t.Fatal(err)
			}
			switch k := raw.(type) {
			case *rsa.PrivateKey:
				if k.N.BitLen() != tc.bits {
					t.Fatalf("RSA modulus %d bits, want %d", k.N.BitLen(), tc.bits)
				}
			case *ecdsa.PrivateKey:
				if k.Curve.Params().BitSize != tc.bits {
					t.Fatalf("curve of %d bits, want %d", k.Curve.Params().BitSize, tc.bits)
				}
			case *ed25519.PrivateKey:
			default:
				t.Fatalf("private key of type %T", raw)
			}
			signer, err := ssh.NewSignerFromKey(raw)
			if err != nil {
				t.Fatal(err)
			}
			public, comment, _, rest, err := ssh.ParseAuthorizedKey(values[PublicKey])
			if err != nil || len(rest) != 0 {
				t.Fatalf("publicKey is not one authorized_keys line: %v", err)
			}
			if public.Type() != tc.algo || string(public.Marshal()) != string(signer.PublicKey().Marshal()) {
				t.Fatalf("publicKey %s does not match the private key", public.Type())
			}
			if comment != tc.comment || !strings.HasSuffix(string(values[PublicKey]), "\n") {
				t.Fatalf("publicKey comment %q, want %q, ending in a newline", comment, tc.comment)
			}
			if tc.comment != "" {
				// OpenSSH keeps the comment in the private key too.
				if _, err := ssh.ParsePrivateKey(values[PrivateKey]); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestGenerateRefusesWhatCostsTooMuchOrIsUnknown: sizes outside the
// documented ones are refused, by Check too, never silently replaced.
func TestGenerateRefusesWhatCostsTooMuchOrIsUnknown(t *testing.T) {
	for _, spec := range []genv1.SSHKeySpec{
		{KeySize: ptr.To(8192)},
		{KeyType: genv1.SSHKeyRSA, KeySize: ptr.To(1024)},
		{KeyType: genv1.SSHKeyECDSA, KeySize: ptr.To(512)},
		{KeyType: "dsa"},
	} {
		if _, err := Generate(context.Background(), spec); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", spec, err)
		}
		if _, err := newKey(spec, nil); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("Check of %+v: %v, want ErrInvalidConfig", spec, err)
		}
	}
}

// TestKeysDiffer: two generations never give the same key.
func TestKeysDiffer(t *testing.T) {
	a, err := Generate(context.Background(), genv1.SSHKeySpec{KeyType: genv1.SSHKeyEd25519})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(context.Background(), genv1.SSHKeySpec{KeyType: genv1.SSHKeyEd25519})
	if err != nil {
		t.Fatal(err)
	}
	if string(a[PrivateKey]) == string(b[PrivateKey]) {
		t.Fatal("two generations made the same key")
	}
}

// TestOneRSAKeyAtATime: RSA keys are generated one at a time in the
// process, and a sync that cannot wait gives up instead of queueing.
func TestOneRSAKeyAtATime(t *testing.T) {
	rsaSlots <- struct{}{} // another generation holds the slot
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Generate(ctx, genv1.SSHKeySpec{KeyType: genv1.SSHKeyRSA}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an RSA key while the slot is taken: %v, want the sync's deadline", err)
	}
	// Ed25519 and ECDSA cost microseconds and do not wait.
	if _, err := Generate(ctx, genv1.SSHKeySpec{KeyType: genv1.SSHKeyEd25519}); err != nil {
		t.Errorf("an Ed25519 key while the RSA slot is taken: %v", err)
	}
	<-rsaSlots
	if _, err := Generate(context.Background(), genv1.SSHKeySpec{}); err != nil {
		t.Fatal(err)
	}
}
