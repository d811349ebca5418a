// Package mfa generates time-based one-time passwords (TOTP, RFC 6238)
// from a seed held in a Secret: no SDK, in every build.
package mfa

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Output keys, as upstream's.
const (
	Token    = "token"
	TimeLeft = "timeLeft"
)

// MaxSeedBytes bounds the seed read from a Secret (base32 text): RFC 4226
// seeds are 16 to 64 bytes.
const MaxSeedBytes = 1024

// Registration wires the generator into every binary. A token has no
// state: it expires.
var Registration = plugin.Definition[*genv1.MFA]{
	Name: "mfa", Kind: "MFA",
	Check: func(cfg *genv1.MFA) error {
		_, err := settingsOf(cfg.Spec)
		return err
	},
	CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *genv1.MFA, scope plugin.Scope) error {
		_, err := seed(ctx, deps, cfg.Spec, scope)
		return err
	},
	Generate: func(ctx context.Context, deps plugin.Deps, cfg *genv1.MFA, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
		s, err := settingsOf(cfg.Spec)
		if err != nil {
			return nil, nil, err
		}
		key, err := seed(ctx, deps, cfg.Spec, scope)
		if err != nil {
			return nil, nil, err
		}
		at := time.Now()
		if cfg.Spec.When != nil {
			at = cfg.Spec.When.Time
		}
		token, left := s.At(key, at)
		return map[string][]byte{Token: []byte(token), TimeLeft: []byte(strconv.Itoa(left))}, nil, nil
	},
}.Registration()

// Settings are how tokens are made: digits, period and hash.
type Settings struct {
	Digits int
	Period time.Duration
	Hash   func() hash.Hash
}

// hashes are the algorithms a spec may name, as upstream names them.
var hashes = map[string]func() hash.Hash{
	"sha1": sha1.New, "sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New, "sha512_256": sha512.New512_256,
}

// settingsOf reads spec with upstream's defaults (6 digits, 30 seconds,
// SHA-1).
func settingsOf(spec genv1.MFASpec) (Settings, error) {
	s := Settings{Digits: 6, Period: 30 * time.Second, Hash: sha1.New}
	if spec.Length != 0 {
		if spec.Length < 1 || spec.Length > 10 {
			return s, fmt.Errorf("%w: length is 1 to 10 digits, not %d", plugin.ErrInvalidConfig, spec.Length)
		}
		s.Digits = spec.Length
	}
	if spec.TimePeriod != 0 {
		if spec.TimePeriod < 1 || spec.TimePeriod > 86400 {
			return s, fmt.Errorf("%w: timePeriod is 1 to 86400 seconds, not %d", plugin.ErrInvalidConfig, spec.TimePeriod)
		}
		s.Period = time.Duration(spec.TimePeriod) * time.Second
	}
	if spec.Algorithm != "" {
		h, ok := hashes[strings.ToLower(spec.Algorithm)]
		if !ok {
			return s, fmt.Errorf("%w: algorithm %q (want sha1, sha256, sha384, sha512 or sha512_256)", plugin.ErrInvalidConfig, spec.Algorithm)
		}
		s.Hash = h
	}
	return s, nil
}

// seed reads and decodes the seed the spec names, in the scope's
// namespace. Errors name the Secret and key, never the content.
func seed(ctx context.Context, deps plugin.Deps, spec genv1.MFASpec, scope plugin.Scope) ([]byte, error) {
	ref := spec.Secret
	raw, err := kit.CredentialValue(ctx, deps.APIReader, scope.Namespace, ref.Name, ref.Key)
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxSeedBytes {
		return nil, fmt.Errorf("%w: the seed in Secret %s/%s key %q is over %d bytes", plugin.ErrInvalidConfig, scope.Namespace, ref.Name, ref.Key, MaxSeedBytes)
	}
	text := strings.ToUpper(strings.TrimRight(strings.Join(strings.Fields(string(raw)), ""), "="))
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(text)
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: the seed in Secret %s/%s key %q is not base32", plugin.ErrInvalidConfig, scope.Namespace, ref.Name, ref.Key)
	}
	return key, nil
}

// At is the token for key at t (RFC 6238: HOTP, RFC 4226, of the number of
// periods since the Unix epoch) and the whole seconds it stays valid.
func (s Settings) At(key []byte, t time.Time) (token string, secondsLeft int) {
	period := int64(s.Period / time.Second)
	unix := t.Unix()
	counter := unix / period
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(counter))
	mac := hmac.New(s.Hash, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	offset := sum[len(sum)-1] & 0x0f
	code := int64(binary.BigEndian.Uint32(sum[offset:offset+4]) & 0x7fffffff)
	mod := int64(1)
	for range s.Digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", s.Digits, code%mod), int(period - unix%period)
}
