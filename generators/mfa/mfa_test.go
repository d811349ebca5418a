package mfa

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"errors"
	"hash"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/plugin"
)

// The seeds of RFC 6238's Appendix B, one per hash.
const (
	seedSHA1   = "12345678901234567890"
	seedSHA256 = "12345678901234567890123456789012"
	seedSHA512 = "1234567890123456789012345678901234567890123456789012345678901234"
)

// TestRFC6238Vectors checks every test vector of RFC 6238 Appendix B
// (8 digits, 30 seconds).
func TestRFC6238Vectors(t *testing.T) {
	vectors := []struct {
		unix                 int64
		sha1, sha256, sha512 string
	}{
		{59, "94287082", "46119246", "90693936"},
		{1111111109, "07081804", "68084774", "25091201"},
		{1111111111, "14050471", "67062674", "99943326"},
		{1234567890, "89005924", "91819424", "93441116"},
		{2000000000, "69279037", "90698825", "38618901"},
		{20000000000, "65353130", "77737706", "47863826"},
	}
	for _, v := range vectors {
		for _, h := range []struct {
			name, seed, want string
			hash             func() hash.Hash
		}{
			{"sha1", seedSHA1, v.sha1, sha1.New},
			{"sha256", seedSHA256, v.sha256, sha256.New},
			{"sha512", seedSHA512, v.sha512, sha512.New},
		} {
			s := Settings{Digits: 8, Period: 30 * time.Second, Hash: h.hash}
			got, left := s.At([]byte(h.seed), time.Unix(v.unix, 0))
			if got != h.want {
				t.Errorf("%s at %d: %s, want %s", h.name, v.unix, got, h.want)
			}
			if want := int(30 - v.unix%30); left != want {
				t.Errorf("%s at %d: %d seconds left, want %d", h.name, v.unix, left, want)
			}
		}
	}
}

// TestRFC4226Vectors: with a one-second period the counter is the Unix
// second, so TOTP is RFC 4226's HOTP and its Appendix D vectors apply.
func TestRFC4226Vectors(t *testing.T) {
	want := []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"}
	s := Settings{Digits: 6, Period: time.Second, Hash: sha1.New}
	for counter, w := range want {
		if got, _ := s.At([]byte(seedSHA1), time.Unix(int64(counter), 0)); got != w {
			t.Errorf("counter %d: %s, want %s", counter, got, w)
		}
	}
}

func seedSecret(key, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "totp"}, Data: map[string][]byte{key: []byte(value)}}
}

func generate(t *testing.T, spec genv1.MFASpec, objs ...*corev1.Secret) (map[string][]byte, error) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := genv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&genv1.MFA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "mfa"}, Spec: spec})
	for _, o := range objs {
		builder = builder.WithObjects(o)
	}
	c := builder.Build()
	gen := Registration.NewGenerator(plugin.Deps{Client: c, APIReader: c})
	values, _, err := gen.Generate(context.Background(), plugin.Ref{Kind: "MFA", Namespace: "team", Name: "mfa"}, plugin.Scope{Namespace: "team"})
	return values, err
}

// TestGenerateReadsTheSeedAsAuthenticatorsDo: the seed is base32 in a
// Secret of the scope's namespace; spaces, lower case and padding are
// accepted, and the output keys are upstream's.
func TestGenerateReadsTheSeedAsAuthenticatorsDo(t *testing.T) {
	encoded := base32.StdEncoding.EncodeToString([]byte(seedSHA1)) // padded: 32 characters, no '=' for 20 bytes
	spaced := strings.ToLower(encoded[:4] + " " + encoded[4:16] + " " + encoded[16:])
	when := metav1.NewTime(time.Unix(1111111109, 0))
	for _, seed := range []string{encoded, spaced, encoded + "===="} {
		values, err := generate(t, genv1.MFASpec{Secret: provv1.SecretKeySelector{Name: "totp", Key: "seed"}, Length: 8, When: &when}, seedSecret("seed", seed))
		if err != nil {
			t.Fatalf("seed %q: %v", seed, err)
		}
		if got := string(values[Token]); got != "07081804" {
			t.Fatalf("seed %q: token %s, want RFC 6238's 07081804", seed, got)
		}
		if got := string(values[TimeLeft]); got != "1" {
			t.Fatalf("timeLeft %s, want 1", got)
		}
	}
	// Defaults: 6 digits of SHA-1 over 30 seconds, upstream's.
	values, err := generate(t, genv1.MFASpec{Secret: provv1.SecretKeySelector{Name: "totp", Key: "seed"}, When: &when}, seedSecret("seed", encoded))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(values[Token]); got != "081804" {
		t.Fatalf("default token %s, want the last 6 digits of 07081804", got)
	}
	// A named algorithm is used (sha256 gives RFC 6238's SHA-256 vector).
	values, err = generate(t, genv1.MFASpec{Secret: provv1.SecretKeySelector{Name: "totp", Key: "seed"}, Length: 8, Algorithm: "sha256", When: &when},
		seedSecret("seed", base32.StdEncoding.EncodeToString([]byte(seedSHA256))))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(values[Token]); got != "68084774" {
		t.Fatalf("sha256 token %s, want 68084774", got)
	}
}

// TestGenerateErrorsSayWhatIsWrongAndHoldNoSeed: a missing Secret or key
// awaits it; a seed that is not base32 or too long is refused; no error
// carries the seed.
func TestGenerateErrorsSayWhatIsWrongAndHoldNoSeed(t *testing.T) {
	spec := genv1.MFASpec{Secret: provv1.SecretKeySelector{Name: "totp", Key: "seed"}}
	const secret = "NOT-BASE32-SEED-1"
	cases := []struct {
		name   string
		secret *corev1.Secret
		is     error
		says   string
	}{
		{"no Secret", nil, plugin.ErrCredentialsNotFound, "team/totp"},
		{"no key", seedSecret("other", "GEZDGNBV"), plugin.ErrCredentialsNotFound, `no key "seed"`},
		{"not base32", seedSecret("seed", secret), plugin.ErrInvalidConfig, "not base32"},
		{"too long", seedSecret("seed", strings.Repeat("A", MaxSeedBytes+1)), plugin.ErrInvalidConfig, "over 1024 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []*corev1.Secret
			if tc.secret != nil {
				objs = append(objs, tc.secret)
			}
			_, err := generate(t, spec, objs...)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want %v saying %q", err, tc.is, tc.says)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error holds the seed: %v", err)
			}
			if _, ok := plugin.AwaitedObject(err); ok != errors.Is(err, plugin.ErrCredentialsNotFound) {
				t.Fatalf("a missing seed awaits its Secret, a bad one does not: %v", err)
			}
		})
	}
}

// TestSettingsRefuseWhatTheSchemaRefuses: a configuration written past the
// schema (an upstream manifest translated) gets a clear error.
func TestSettingsRefuseWhatTheSchemaRefuses(t *testing.T) {
	for _, spec := range []genv1.MFASpec{{Length: -1}, {Length: 11}, {TimePeriod: -1}, {TimePeriod: 86401}, {Algorithm: "md5"}} {
		if _, err := settingsOf(spec); !errors.Is(err, plugin.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", spec, err)
		}
	}
	s, err := settingsOf(genv1.MFASpec{Algorithm: "SHA512"})
	if err != nil || s.Hash().Size() != sha512.Size {
		t.Fatalf("upper-case SHA512: %v", err)
	}
}
