package secrettemplate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestRC2KnownAnswers: RFC 2268's test vectors and OpenSSL's rc2-40-cbc
// and rc2-cbc (legacy provider) outputs, decrypted.
func TestRC2KnownAnswers(t *testing.T) {
	seen := map[byte]bool{}
	for _, b := range rc2PiTable {
		seen[b] = true
	}
	if len(seen) != 256 {
		t.Fatal("PITABLE is not a permutation")
	}
	for _, c := range []struct{ key, iv, plain, cipher string }{
		// RFC 2268 section 5 (64-bit keys, 64 effective bits), one block.
		{"ffffffffffffffff", "0000000000000000", "ffffffffffffffff", "278b27e42e2f0d49"},
		{"3000000000000000", "0000000000000000", "1000000000000001", "30649edf9be7d2c2"},
		// openssl enc -rc2-40-cbc / -rc2-cbc of "0123456789abcdefXYZ", padded.
		{"0102030405", "0001020304050607", hex.EncodeToString([]byte("0123456789abcdefXYZ\x05\x05\x05\x05\x05")),
			"39286680924c1c6d9b59b88ac96134217cc1088aa60d70aa"},
		{"000102030405060708090a0b0c0d0e0f", "0001020304050607", hex.EncodeToString([]byte("0123456789abcdefXYZ\x05\x05\x05\x05\x05")),
			"d1d4fbc323309b036ac1bdc52f2d5f968624128291464754"},
	} {
		key, iv, plain, ct := unhex(t, c.key), unhex(t, c.iv), unhex(t, c.plain), unhex(t, c.cipher)
		block, err := rc2Block(key)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(ct))
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(got, ct)
		if !bytes.Equal(got, plain) {
			t.Errorf("key %s: decrypted %x, want %x", c.key, got, plain)
		}
		if enc := rc2EncryptCBC(key, iv, plain); !bytes.Equal(enc, ct) {
			t.Errorf("key %s: the tests' encryption gives %x, want %x", c.key, enc, ct)
		}
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rc2EncryptCBC is RC2 encryption (RFC 2268 section 3), for building
// archives in tests; eso itself only decrypts.
func rc2EncryptCBC(key, iv, plain []byte) []byte {
	k := must(newRC2Decrypter(key, 8*len(key))).k
	out := make([]byte, len(plain))
	prev := append([]byte(nil), iv...)
	for off := 0; off < len(plain); off += 8 {
		var r [4]uint16
		for i := range r {
			r[i] = binary.LittleEndian.Uint16(plain[off+2*i:]) ^ binary.LittleEndian.Uint16(prev[2*i:])
		}
		j := 0
		mix := func() {
			for i, s := range [4]int{1, 2, 3, 5} {
				r[i] += k[j] + (r[(i+3)%4] & r[(i+2)%4]) + (^r[(i+3)%4] & r[(i+1)%4])
				r[i] = bits.RotateLeft16(r[i], s)
				j++
			}
		}
		mash := func() {
			for i := range r {
				r[i] += k[r[(i+3)%4]&63]
			}
		}
		for _, n := range []int{5, 0, 6, 0, 5} {
			if n == 0 {
				mash()
			}
			for range n {
				mix()
			}
		}
		for i := range r {
			binary.LittleEndian.PutUint16(out[off+2*i:], r[i])
		}
		prev = out[off : off+8]
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// p12Spec describes an archive the tests build by hand, so that each part's
// algorithm and iteration count can be set alone.
type p12Spec struct {
	password string
	// noTerminator encrypts and MACs with no password bytes at all, as
	// some tools write the empty password.
	noTerminator bool
	// mac: sha1, sha256, sha512, pbmac1 or none.
	mac     string
	macIter int
	// content encrypts the certificate's safe contents: plain, 3des,
	// rc2-40, pbes2 (HMAC-SHA256, AES-256), pbes2-sha1 or pbes2-sha512.
	content     string
	contentIter int
	// key encrypts the key bag (the same names; plain is a key bag).
	key     string
	keyIter int
	// keyInContent puts the key bag in the certificate's safe contents.
	keyInContent bool
	// cheap derives the keys of parts declaring 100,000 iterations or
	// more (or fewer than one) with one iteration: such an archive does not
	// decode, but costs little to build, and is refused before those parts
	// are derived.
	cheap bool
	// salt, when set, is the salt of every part instead of a short one.
	salt []byte
	// extraBags are added to the certificate's safe contents.
	extraBags []asn1.RawValue
	// edit changes the finished parts before they are encoded.
	edit func(*p12Parts)
}

// p12Parts are an archive's parts before encoding.
type p12Parts struct {
	version  int
	macAlg   pkix.AlgorithmIdentifier
	contents []asn1.RawValue // content infos
}

type (
	tContentInfo struct {
		ContentType asn1.ObjectIdentifier
		Content     asn1.RawValue
	}
	tMacData struct {
		Mac struct {
			Algorithm pkix.AlgorithmIdentifier
			Digest    []byte
		}
		MacSalt    []byte
		Iterations int
	}
	tPFX struct {
		Version  int
		AuthSafe tContentInfo
		MacData  tMacData `asn1:"optional"`
	}
	tBag struct {
		ID    asn1.ObjectIdentifier
		Value asn1.RawValue
	}
	tEncryptedData struct {
		Version int
		Content struct {
			ContentType asn1.ObjectIdentifier
			Algorithm   pkix.AlgorithmIdentifier
			Encrypted   asn1.RawValue
		}
	}
	tEncryptedKey struct {
		Algorithm pkix.AlgorithmIdentifier
		Encrypted []byte
	}
	tPBKDF2 struct {
		Salt       []byte
		Iterations int
		KeyLength  int `asn1:"optional"`
		PRF        pkix.AlgorithmIdentifier
	}
)

func der(v any) []byte { return must(asn1.Marshal(v)) }

func raw(v any) asn1.RawValue { return asn1.RawValue{FullBytes: der(v)} }

// explicit0 wraps a value in [0] EXPLICIT.
func explicit0(inner []byte) asn1.RawValue {
	return raw(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: inner})
}

func algID(oid asn1.ObjectIdentifier, params any) pkix.AlgorithmIdentifier {
	a := pkix.AlgorithmIdentifier{Algorithm: oid}
	if params != nil {
		a.Parameters = raw(params)
	}
	return a
}

func bag(oid asn1.ObjectIdentifier, value []byte) asn1.RawValue {
	return raw(tBag{ID: oid, Value: explicit0(value)})
}

func (s p12Spec) bmp() []byte {
	if s.noTerminator {
		return nil
	}
	return must(p12Passwords(s.password))[0].bmp
}

func (s p12Spec) derive(iter int) int {
	if s.cheap && (iter >= 100_000 || iter < 1) {
		return 1
	}
	return iter
}

// encrypt encrypts plain as the named algorithm with iter iterations.
func (s p12Spec) encrypt(t testing.TB, name string, iter int, plain []byte) (pkix.AlgorithmIdentifier, []byte) {
	t.Helper()
	salt := []byte("saltsalt")
	if s.salt != nil {
		salt = s.salt
	}
	pad := func(bs int) []byte {
		n := bs - len(plain)%bs
		return append(append([]byte(nil), plain...), bytes.Repeat([]byte{byte(n)}, n)...)
	}
	switch name {
	case "3des", "rc2-40":
		oid, keyLen := oidP12PBE3DES, 24
		if name == "rc2-40" {
			oid, keyLen = oidP12PBERC240, 5
		}
		key := pkcs12KDF(sha1.New, 1, s.bmp(), salt, s.derive(iter), keyLen)
		iv := pkcs12KDF(sha1.New, 2, s.bmp(), salt, s.derive(iter), 8)
		alg := algID(oid, p12PBEParams{Salt: salt, Iterations: iter})
		if name == "rc2-40" {
			return alg, rc2EncryptCBC(key, iv, pad(8))
		}
		out := pad(8)
		cipher.NewCBCEncrypter(must(des.NewTripleDESCipher(key)), iv).CryptBlocks(out, out)
		return alg, out
	case "pbes2", "pbes2-sha1", "pbes2-sha512":
		prfOID, h := oidP12HMACSHA256, sha256.New
		switch name {
		case "pbes2-sha1":
			prfOID, h = oidP12HMACSHA1, sha1.New
		case "pbes2-sha512":
			prfOID, h = oidP12HMACSHA512, sha512.New
		}
		key := must(pbkdf2.Key(h, s.password, salt, s.derive(iter), 32))
		iv := bytes.Repeat([]byte{7}, 16)
		alg := algID(oidP12PBES2, p12PBES2Params{
			KDF:    algID(oidP12PBKDF2, tPBKDF2{Salt: salt, Iterations: iter, PRF: algID(prfOID, asn1.NullRawValue)}),
			Scheme: algID(oidP12AES256CBC, iv),
		})
		out := pad(16)
		cipher.NewCBCEncrypter(must(aes.NewCipher(key)), iv).CryptBlocks(out, out)
		return alg, out
	}
	t.Fatalf("no cipher %q", name)
	return pkix.AlgorithmIdentifier{}, nil
}

// build makes the archive and returns it with the key it holds, as PEM.
func (s p12Spec) build(t testing.TB) ([]byte, string) {
	t.Helper()
	_, _, certPEM, _ := selfSigned(t, "walk", nil, nil)
	certDER := must(pemCertificates(certPEM))[0].Raw
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	keyDER := must(x509.MarshalPKCS8PrivateKey(key))
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))

	certBag := bag(oidP12CertBag, der(tBag{ID: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}, Value: explicit0(der(certDER))}))
	var keyBag asn1.RawValue
	if s.key == "plain" {
		keyBag = bag(oidP12KeyBag, keyDER)
	} else {
		alg, enc := s.encrypt(t, s.key, s.keyIter, keyDER)
		keyBag = bag(oidP12ShroudedKeyBag, der(tEncryptedKey{Algorithm: alg, Encrypted: enc}))
	}
	first := append([]asn1.RawValue{certBag}, s.extraBags...)
	var second []asn1.RawValue
	if s.keyInContent {
		first = append(first, keyBag)
	} else {
		second = []asn1.RawValue{keyBag}
	}
	contentInfo := func(cipherName string, iter int, bags []asn1.RawValue) asn1.RawValue {
		safe := der(bags)
		if cipherName == "plain" {
			return raw(tContentInfo{ContentType: oidP12Data, Content: explicit0(der(safe))})
		}
		var ed tEncryptedData
		ed.Content.ContentType = oidP12Data
		var enc []byte
		ed.Content.Algorithm, enc = s.encrypt(t, cipherName, iter, safe)
		ed.Content.Encrypted = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: enc}
		return raw(tContentInfo{ContentType: oidP12EncryptedData, Content: explicit0(der(ed))})
	}
	parts := &p12Parts{version: 3, contents: []asn1.RawValue{contentInfo(s.content, s.contentIter, first)}}
	if second != nil {
		parts.contents = append(parts.contents, contentInfo("plain", 0, second))
	}
	if s.edit != nil {
		s.edit(parts)
	}
	authSafe := der(parts.contents)

	pfx := tPFX{Version: parts.version, AuthSafe: tContentInfo{ContentType: oidP12Data, Content: explicit0(der(authSafe))}}
	macSalt := []byte("macsaltmacsalt")
	if s.salt != nil {
		macSalt = s.salt
	}
	var macKey []byte
	var macHash func() hash.Hash
	switch s.mac {
	case "sha1", "sha256", "sha512":
		oid := map[string]asn1.ObjectIdentifier{"sha1": oidP12SHA1, "sha256": oidP12SHA256, "sha512": oidP12SHA512}[s.mac]
		macHash = map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}[s.mac]
		pfx.MacData.Mac.Algorithm = algID(oid, asn1.NullRawValue)
		pfx.MacData.Iterations = s.macIter
		macKey = pkcs12KDF(macHash, 3, s.bmp(), macSalt, s.derive(s.macIter), macHash().Size())
	case "pbmac1":
		macHash = sha256.New
		pfx.MacData.Mac.Algorithm = algID(oidP12PBMAC1, p12PBMAC1Params{
			KDF: algID(oidP12PBKDF2, tPBKDF2{Salt: macSalt, Iterations: s.macIter, KeyLength: 32, PRF: algID(oidP12HMACSHA256, asn1.NullRawValue)}),
			MAC: algID(oidP12HMACSHA256, asn1.NullRawValue),
		})
		pfx.MacData.Iterations = 1
		macKey = must(pbkdf2.Key(sha256.New, s.password, macSalt, s.derive(s.macIter), 32))
	case "none":
	default:
		t.Fatalf("no MAC %q", s.mac)
	}
	if macHash != nil {
		if parts.macAlg.Algorithm != nil {
			pfx.MacData.Mac.Algorithm = parts.macAlg
		}
		m := hmac.New(macHash, macKey)
		m.Write(authSafe)
		pfx.MacData.Mac.Digest = m.Sum(nil)
		pfx.MacData.MacSalt = macSalt
	}
	return der(pfx), keyPEM
}

// over is an iteration count that alone passes the bound.
const over = maxPkcs12Work + 1

// normal is an archive of each part's usual algorithm at OpenSSL's count.
var normal = p12Spec{password: "pw", mac: "sha256", macIter: 2048, content: "pbes2", contentIter: 2048, key: "pbes2", keyIter: 2048}

func with(s p12Spec, edit func(*p12Spec)) p12Spec {
	edit(&s)
	return s
}

func isWorkBound(err error) bool {
	be, ok := budgetError(err)
	return ok && strings.Contains(be.what, "units of key derivation and decryption")
}

// TestPkcs12WorkIsBounded: an archive whose key derivation, in any one part
// the walk reads, asks for more than maxPkcs12Work iterations is refused
// before anything is derived; each case is the normal archive with that
// one part changed.
func TestPkcs12WorkIsBounded(t *testing.T) {
	cases := map[string]p12Spec{
		"MAC (SHA-1)":   with(normal, func(s *p12Spec) { s.mac, s.macIter = "sha1", over }),
		"MAC (SHA-256)": with(normal, func(s *p12Spec) { s.macIter = over }),
		// SHA-512 counts 4 per iteration.
		"MAC (SHA-512)": with(normal, func(s *p12Spec) { s.mac, s.macIter = "sha512", maxPkcs12Work/4+1 }),
		"MAC (PBMAC1)":  with(normal, func(s *p12Spec) { s.mac, s.macIter = "pbmac1", over }),
		// go-pkcs12 tries an empty password's MAC twice.
		"MAC, empty password counted twice": with(normal, func(s *p12Spec) { s.password, s.macIter = "", maxPkcs12Work/2+1 }),
		"encrypted content (PBES2)":         with(normal, func(s *p12Spec) { s.contentIter = over }),
		"encrypted content (PBES2, SHA-512)": with(normal, func(s *p12Spec) {
			s.content, s.contentIter = "pbes2-sha512", maxPkcs12Work/8+1 // the walk's decryption and go-pkcs12's, 4 each
		}),
		"encrypted content (3DES)":   with(normal, func(s *p12Spec) { s.content, s.contentIter = "3des", over }),
		"encrypted content (RC2-40)": with(normal, func(s *p12Spec) { s.content, s.contentIter = "rc2-40", over }),
		// The walk decrypts the content too, so it is counted twice: half
		// the bound each is over it.
		"encrypted content, the walk's decryption counted": with(normal, func(s *p12Spec) { s.contentIter = maxPkcs12Work/2 + 1 }),
		"shrouded key bag (PBES2)":                         with(normal, func(s *p12Spec) { s.keyIter = over }),
		"shrouded key bag (3DES)":                          with(normal, func(s *p12Spec) { s.key, s.keyIter = "3des", over }),
		// 3DES derives two SHA-1 blocks of key and one of IV.
		"shrouded key bag (3DES), three blocks": with(normal, func(s *p12Spec) { s.key, s.keyIter = "3des", maxPkcs12Work/3+1 }),
		// AES-256's 32-byte key takes two blocks of HMAC-SHA1.
		"shrouded key bag (PBES2, SHA-1), two blocks": with(normal, func(s *p12Spec) { s.key, s.keyIter = "pbes2-sha1", maxPkcs12Work/2+1 }),
		"shrouded key bag in encrypted content (PBES2)": with(normal, func(s *p12Spec) {
			s.keyInContent, s.keyIter = true, over
		}),
		"shrouded key bag in encrypted content (RC2-40)": with(normal, func(s *p12Spec) {
			s.content, s.keyInContent, s.keyIter = "rc2-40", true, over
		}),
		// With an empty password go-pkcs12 may read the content with no
		// password bytes (when the MAC says so): the walk reads it both ways.
		"shrouded key bag in content encrypted with no password bytes": with(normal, func(s *p12Spec) {
			s.password, s.noTerminator, s.mac, s.content, s.keyInContent, s.keyIter = "", true, "sha1", "3des", true, over
		}),
		"shrouded key bag in a safe contents bag": with(normal, func(s *p12Spec) {
			s.extraBags = []asn1.RawValue{bag(oidP12SafeContentsBag, der([]asn1.RawValue{
				bag(oidP12ShroudedKeyBag, der(tEncryptedKey{Algorithm: pbe3DES(over), Encrypted: make([]byte, 16)})),
			}))}
		}),
		// Each part alone is within the bound; together they are not.
		"all parts together": with(normal, func(s *p12Spec) { s.macIter, s.keyIter = maxPkcs12Work/2, maxPkcs12Work/2 }),
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			spec.cheap = true
			archive, _ := spec.build(t)
			_, err := readPkcs12Key(nil, spec.password, string(archive))
			if !isWorkBound(err) {
				t.Fatalf("err = %v, want the key-derivation bound", err)
			}
			if strings.Contains(err.Error(), spec.password) && spec.password != "" {
				t.Errorf("error names the password: %v", err)
			}
		})
	}
}

// pbe3DES is PKCS#12's 3DES encryption declaring iter iterations.
func pbe3DES(iter int) pkix.AlgorithmIdentifier {
	return algID(oidP12PBE3DES, p12PBEParams{Salt: []byte("s"), Iterations: iter})
}

// TestPkcs12NormalArchivesDecode: archives of every algorithm the walk reads,
// at usual counts, decode to their key, including 3DES at 100,000
// iterations with a password (about 1,000,000 units, just under
// maxPkcs12Work).
func TestPkcs12NormalArchivesDecode(t *testing.T) {
	cases := map[string]p12Spec{
		"PBES2, SHA-256 MAC":                     normal,
		"PBMAC1":                                 with(normal, func(s *p12Spec) { s.mac = "pbmac1" }),
		"SHA-512 MAC, PBES2 SHA-512":             with(normal, func(s *p12Spec) { s.mac, s.content, s.key = "sha512", "pbes2-sha512", "pbes2-sha512" }),
		"OpenSSL 1.x (RC2-40 content, 3DES key)": with(normal, func(s *p12Spec) { s.mac, s.content, s.key = "sha1", "rc2-40", "3des" }),
		"Windows (3DES, 2000)": with(normal, func(s *p12Spec) {
			s.mac, s.content, s.key, s.macIter, s.contentIter, s.keyIter = "sha1", "3des", "3des", 2000, 2000, 2000
		}),
		"key in encrypted content":        with(normal, func(s *p12Spec) { s.keyInContent = true }),
		"key in RC2-40 content":           with(normal, func(s *p12Spec) { s.content, s.keyInContent = "rc2-40", true }),
		"plain content and key":           with(normal, func(s *p12Spec) { s.content, s.key = "plain", "plain" }),
		"empty password":                  with(normal, func(s *p12Spec) { s.password, s.mac, s.content = "", "sha1", "3des" }),
		"empty password, no bytes at all": with(normal, func(s *p12Spec) { s.password, s.noTerminator, s.mac, s.content = "", true, "sha1", "3des" }),
		"no MAC, empty password":          with(normal, func(s *p12Spec) { s.password, s.mac = "", "none" }),
		"3DES at 100,000 with a password": with(normal, func(s *p12Spec) {
			s.mac, s.content, s.key, s.macIter, s.contentIter, s.keyIter = "sha1", "3des", "3des", 100_000, 100_000, 100_000
		}),
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			archive, keyPEM := spec.build(t)
			if got, err := readPkcs12Key(nil, spec.password, string(archive)); err != nil || got != keyPEM {
				t.Fatalf("pkcs12keyPass: %v (key differs: %v)", err, got != keyPEM)
			}
			if _, err := readPkcs12Cert(nil, spec.password, string(archive)); err != nil {
				t.Fatalf("pkcs12certPass: %v", err)
			}
		})
	}
	// And as go-pkcs12 and eso's own helpers write them.
	_, _, certPEM, keyPEM := selfSigned(t, "enc", nil, nil)
	cert := must(pemCertificates(certPEM))[0]
	key := must(parsePrivateKey(must(pemBlock(keyPEM))))
	for name, enc := range map[string]*pkcs12.Encoder{
		"LegacyRC2 2048": pkcs12.LegacyRC2, "LegacyDES 2048": pkcs12.LegacyDES, "Modern2023 2048": pkcs12.Modern2023,
		"Modern2026 2048": pkcs12.Modern2026, "Modern2023 100000": pkcs12.Modern2023.WithIterations(100_000),
		"Modern2026 100000": pkcs12.Modern2026.WithIterations(100_000),
	} {
		archive, err := enc.Encode(key, cert, nil, "pw")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := readPkcs12Key(nil, "pw", string(archive)); err != nil || got != keyPEM {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func pemBlock(s string) ([]byte, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("no PEM")
	}
	return b.Bytes, nil
}

// TestPkcs12RealArchiveOverTheBound: an archive go-pkcs12 writes with a
// quarter of the bound in each of its four derivations (MAC, content read
// by the walk and by go-pkcs12, key) is refused, and reads once the bound
// is raised: the refusal, not a failing decode, is what stops it.
func TestPkcs12RealArchiveOverTheBound(t *testing.T) {
	_, _, certPEM, keyPEM := selfSigned(t, "big", nil, nil)
	cert := must(pemCertificates(certPEM))[0]
	key := must(parsePrivateKey(must(pemBlock(keyPEM))))
	archive, err := pkcs12.Modern2023.WithIterations(maxPkcs12Work/4+1).Encode(key, cert, nil, "pw")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readPkcs12Key(nil, "pw", string(archive)); !isWorkBound(err) {
		t.Fatalf("err = %v, want the key-derivation bound", err)
	}
	if err := checkPkcs12(archive, "pw", nil); !isWorkBound(err) {
		t.Fatalf("checkPkcs12: %v", err)
	}
	if _, _, _, err := pkcs12.DecodeChain(archive, "pw"); err != nil {
		t.Fatalf("the archive itself is sound: %v", err)
	}
}

// TestPkcs12UnreadArchivesAreRefused: what the walk cannot judge is
// refused, never skipped.
func TestPkcs12UnreadArchivesAreRefused(t *testing.T) {
	md5 := asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5}
	rc4 := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 1}
	hmacSHA384 := asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	good, _ := normal.build(t)
	cases := map[string][]byte{
		"not DER":         []byte("not an archive"),
		"truncated":       good[:len(good)-1],
		"trailing data":   append(append([]byte(nil), good...), 0),
		"PFX version":     archiveOf(with(normal, func(s *p12Spec) { s.edit = func(p *p12Parts) { p.version = 2 } }).build(t)),
		"MAC algorithm":   archiveOf(with(normal, func(s *p12Spec) { s.edit = func(p *p12Parts) { p.macAlg = algID(md5, asn1.NullRawValue) } }).build(t)),
		"zero iterations": archiveOf(with(normal, func(s *p12Spec) { s.keyIter, s.cheap = 0, true }).build(t)),
		"content type": archiveOf(with(normal, func(s *p12Spec) {
			s.edit = func(p *p12Parts) {
				p.contents = append(p.contents, raw(tContentInfo{ContentType: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}, Content: explicit0(der(1))}))
			}
		}).build(t)),
		"content encryption": archiveOf(with(normal, func(s *p12Spec) {
			s.edit = func(p *p12Parts) {
				var ed tEncryptedData
				ed.Content.ContentType = oidP12Data
				ed.Content.Algorithm = algID(rc4, p12PBEParams{Salt: []byte("s"), Iterations: 1})
				ed.Content.Encrypted = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: make([]byte, 8)}
				p.contents[0] = raw(tContentInfo{ContentType: oidP12EncryptedData, Content: explicit0(der(ed))})
			}
		}).build(t)),
		"key encryption": archiveOf(with(normal, func(s *p12Spec) {
			s.extraBags = []asn1.RawValue{bag(oidP12ShroudedKeyBag, der(tEncryptedKey{
				Algorithm: algID(rc4, p12PBEParams{Salt: []byte("s"), Iterations: 1}), Encrypted: make([]byte, 8)}))}
		}).build(t)),
		"PBKDF2 function": archiveOf(with(normal, func(s *p12Spec) {
			s.extraBags = []asn1.RawValue{bag(oidP12ShroudedKeyBag, der(tEncryptedKey{Encrypted: make([]byte, 16),
				Algorithm: algID(oidP12PBES2, p12PBES2Params{
					KDF:    algID(oidP12PBKDF2, tPBKDF2{Salt: []byte("s"), Iterations: 1, PRF: algID(hmacSHA384, asn1.NullRawValue)}),
					Scheme: algID(oidP12AES256CBC, make([]byte, 16)),
				})}))}
		}).build(t)),
		"bag type": archiveOf(with(normal, func(s *p12Spec) {
			s.extraBags = []asn1.RawValue{bag(asn1.ObjectIdentifier{1, 2, 3, 4}, der(1))}
		}).build(t)),
		"safe contents nested too deep": archiveOf(with(normal, func(s *p12Spec) {
			nested := der([]asn1.RawValue{})
			for range maxPkcs12Nesting + 1 {
				nested = der([]asn1.RawValue{bag(oidP12SafeContentsBag, nested)})
			}
			s.extraBags = []asn1.RawValue{bag(oidP12SafeContentsBag, nested)}
		}).build(t)),
	}
	for name, archive := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkPkcs12(archive, "pw", nil)
			if !errors.Is(err, errPkcs12Unread) {
				t.Fatalf("err = %v, want the archive refused as unread", err)
			}
			if _, err := readPkcs12Key(nil, "pw", string(archive)); err == nil {
				t.Fatal("decoded")
			}
		})
	}
}

func archiveOf(b []byte, _ string) []byte { return b }

// TestPkcs12SizesAreBounded: the archive's bytes, content infos, bags and
// key sizes are bounded before anything else is read.
func TestPkcs12SizesAreBounded(t *testing.T) {
	if err := checkPkcs12(make([]byte, maxPkcs12Bytes+1), "", nil); !errors.As(err, new(*budgetExceeded)) {
		t.Errorf("an archive of %d bytes: %v", maxPkcs12Bytes+1, err)
	}
	manySafes, _ := with(normal, func(s *p12Spec) {
		s.edit = func(p *p12Parts) {
			for len(p.contents) <= maxPkcs12Safes {
				p.contents = append(p.contents, raw(tContentInfo{ContentType: oidP12Data, Content: explicit0(der(der([]asn1.RawValue{})))}))
			}
		}
	}).build(t)
	if err := checkPkcs12(manySafes, "pw", nil); err == nil || !strings.Contains(err.Error(), "content infos") {
		t.Errorf("%d content infos: %v", maxPkcs12Safes+1, err)
	}
	manyBags, _ := with(normal, func(s *p12Spec) {
		for range maxPkcs12Bags {
			s.extraBags = append(s.extraBags, bag(oidP12SecretBag, der(1)))
		}
	}).build(t)
	if err := checkPkcs12(manyBags, "pw", nil); err == nil || !strings.Contains(err.Error(), "bags") {
		t.Errorf("%d bags: %v", maxPkcs12Bags+1, err)
	}
	bigKey, _ := with(normal, func(s *p12Spec) {
		s.extraBags = []asn1.RawValue{bag(oidP12KeyBag, make([]byte, maxKeyBytes+1))}
	}).build(t)
	if err := checkPkcs12(bigKey, "pw", nil); !errors.Is(err, errKeyTooLarge) {
		t.Errorf("a key bag of %d bytes: %v", maxKeyBytes+1, err)
	}
	bigShrouded, _ := with(normal, func(s *p12Spec) {
		s.extraBags = []asn1.RawValue{bag(oidP12ShroudedKeyBag, der(tEncryptedKey{
			Algorithm: pbe3DES(1), Encrypted: make([]byte, maxKeyBytes+8)}))}
	}).build(t)
	if err := checkPkcs12(bigShrouded, "pw", nil); !errors.Is(err, errKeyTooLarge) {
		t.Errorf("a shrouded key of %d bytes: %v", maxKeyBytes+8, err)
	}
}

// TestPkcs12WrongPasswordIsRefused: content that does not decrypt is not
// walked as if it were empty.
func TestPkcs12WrongPasswordIsRefused(t *testing.T) {
	for _, content := range []string{"pbes2", "3des", "rc2-40"} {
		archive, _ := with(normal, func(s *p12Spec) { s.content = content }).build(t)
		if err := checkPkcs12(archive, "wrong", nil); !errors.Is(err, errPkcs12Password) {
			t.Errorf("%s: %v", content, err)
		}
	}
}

// TestPkcs12WalkReadsUpstreamArchives: the walk decrypts upstream's
// archives (RC2-40 content, as OpenSSL 1.x writes) and sees every bag.
func TestPkcs12WalkReadsUpstreamArchives(t *testing.T) {
	for file, want := range map[string]struct {
		password string
		bags     int
	}{
		// A key and three certificates each (openssl pkcs12 -legacy -info).
		"foo-nopass.pfx": {"", 4}, "foo-withpass-1234.pfx": {"1234", 4}, "foo-multibag-nopass.pfx": {"", 4},
	} {
		archive, err := os.ReadFile(filepath.Join("testdata", "upstream", file))
		if err != nil {
			t.Fatal(err)
		}
		passwords, _ := p12Passwords(want.password)
		w := &pkcs12Walk{passwords: passwords}
		var pfx p12PFX
		var authSafe asn1.RawValue
		var safes []p12ContentInfo
		if derUnmarshal(archive, &pfx) != nil || derUnmarshal(pfx.AuthSafe.Content.Bytes, &authSafe) != nil || derUnmarshal(authSafe.Bytes, &safes) != nil {
			t.Fatalf("%s does not parse", file)
		}
		for _, s := range safes {
			if err := w.contentInfo(s); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
		if w.bagCount != want.bags {
			t.Errorf("%s: the walk saw %d bags, want %d", file, w.bagCount, want.bags)
		}
	}
}

// TestPkcs12WorkIsChargedToTheRender: a render's PKCS#12 reads share one
// key-derivation budget, charged before the work is done.
func TestPkcs12WorkIsChargedToTheRender(t *testing.T) {
	archive, keyPEM := normal.build(t)
	values := map[string]string{"pfx": string(archive)}
	text := `{{ pkcs12keyPass "pw" .pfx }}`

	b := NewBudget()
	out, err := renderer{values: values, budget: b}.render("k", text)
	if err != nil || out != keyPEM {
		t.Fatalf("render: %v", err)
	}
	// MAC 2048, content read twice (walk and go-pkcs12), key 2048, and a
	// few units for hashing salts, password and the MAC's message and for
	// decrypting the content and key.
	var want int64
	if err := checkPkcs12(archive, "pw", func(n int64) error { want += n; return nil }); err != nil {
		t.Fatal(err)
	}
	if b.kdf != want || want <= 4*2048 || want > 4*2048+64 {
		t.Errorf("charged %d, the walk counts %d, want 4×2048 and a few", b.kdf, want)
	}

	b = NewBudget()
	b.kdf = maxRenderKDF - want + 1
	_, err = renderer{values: values, budget: b}.render("k", text)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "key derivation and decryption past") {
		t.Fatalf("err = %v, want the render's key-derivation budget", err)
	}

	// The per-archive bound surfaces as a budget error naming the bound.
	heavy, _ := with(normal, func(s *p12Spec) { s.keyIter, s.cheap = over, true }).build(t)
	_, err = Render(&esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ index . "pfx" | b64dec | pkcs12keyPass "pw" }}`}},
		map[string][]byte{"pfx": []byte(base64.StdEncoding.EncodeToString(heavy))}, Sources{})
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "units of key derivation and decryption") {
		t.Fatalf("err = %v, want the per-archive bound", err)
	}
}

// workOf is the work the walk charges for an archive.
func workOf(t *testing.T, archive []byte, password string) int64 {
	t.Helper()
	var work int64
	if err := checkPkcs12(archive, password, func(n int64) error { work += n; return nil }); err != nil {
		t.Fatalf("checkPkcs12: %v", err)
	}
	return work
}

func isPasswordBound(err error) bool {
	return errors.Is(err, ErrBudget) && strings.Contains(err.Error(), fmt.Sprintf("password is longer than %d bytes", maxPkcs12Password))
}

// TestPkcs12LongPasswordIsRefused: a password longer than
// maxPkcs12Password bytes is refused before it is converted or copied, and
// the refusal never quotes it; the longest password allowed still reads.
func TestPkcs12LongPasswordIsRefused(t *testing.T) {
	longest := with(normal, func(s *p12Spec) {
		s.password = strings.Repeat("p", maxPkcs12Password)
		s.mac, s.content, s.key = "sha1", "3des", "3des"
	})
	archive, keyPEM := longest.build(t)
	input := string(archive)
	if got, err := readPkcs12Key(nil, longest.password, input); err != nil || got != keyPEM {
		t.Fatalf("the longest password: %v (key differs: %v)", err, got != keyPEM)
	}

	tooLong := strings.Repeat("s3cr3t!", maxPkcs12Password/7+1)[:maxPkcs12Password+1]
	for name, read := range map[string]func(string) error{
		"pkcs12keyPass":  func(pw string) error { _, err := readPkcs12Key(nil, pw, input); return err },
		"pkcs12certPass": func(pw string) error { _, err := readPkcs12Cert(nil, pw, input); return err },
		"checkPkcs12":    func(pw string) error { return checkPkcs12(archive, pw, nil) },
	} {
		err := read(tooLong)
		if !isPasswordBound(err) {
			t.Errorf("%s: err = %v, want the password bound", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error quotes the password: %v", name, err)
		}
	}

	// A password of megabytes, as a secret value may hold, costs nothing:
	// each call once converted and copied it several times over, and
	// hashed it for every derivation.
	huge := strings.Repeat("s3cr3t!", (4<<20)/7)
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var err error
	if n := allocated(func() { _, err = readPkcs12Key(nil, huge, input) }); !isPasswordBound(err) || n > 64<<10 {
		t.Errorf("pkcs12keyPass: err = %v, allocated %d bytes for a password of %d", err, n, len(huge))
	}
	// From a secret value, in four calls of one render.
	values := map[string]string{"pw": huge, "pfx": input}
	text := `{{ pkcs12keyPass .pw .pfx }}{{ pkcs12certPass .pw .pfx }}{{ pkcs12keyPass .pw .pfx }}{{ pkcs12certPass .pw .pfx }}`
	if n := allocated(func() { _, err = renderer{values: values, budget: NewBudget()}.render("k", text) }); !isPasswordBound(err) || n > 256<<10 {
		t.Errorf("render: err = %v, allocated %d bytes for a password of %d", err, n, len(huge))
	}
}

// TestPkcs12WorkGrowsWithPasswordLength: each block a derivation computes
// hashes the password once, so the charge grows by a unit per 64 bytes of
// it (in UCS-2, 2 bytes a character and a terminator) for every block.
func TestPkcs12WorkGrowsWithPasswordLength(t *testing.T) {
	long := strings.Repeat("p", maxPkcs12Password)
	extra := int64((2*len(long) + 2 - 6) / 64) // in UCS-2 with its terminator, against "pw"'s 6 bytes
	for name, c := range map[string]struct {
		spec   p12Spec
		blocks int64
	}{
		// the MAC's block, the content's twice (the walk's and go-pkcs12's)
		// and the key's
		"PBES2, SHA-256 MAC": {normal, 4},
		// the MAC's block, the content's key and IV (3 blocks) twice and
		// the key's 3
		"3DES, SHA-1 MAC": {with(normal, func(s *p12Spec) { s.mac, s.content, s.key = "sha1", "3des", "3des" }), 10},
	} {
		short, _ := c.spec.build(t)
		longer, _ := with(c.spec, func(s *p12Spec) { s.password = long }).build(t)
		got := workOf(t, longer, long) - workOf(t, short, c.spec.password)
		if got < c.blocks*extra {
			t.Errorf("%s: a password of %d bytes instead of 2 adds %d units, want at least %d", name, len(long), got, c.blocks*extra)
		}
	}
}

// TestPkcs12DecryptionIsCharged: every decryption of the encrypted content
// (the walk's, once per reading of the password, and go-pkcs12's) and of a
// shrouded key is charged by its bytes, before it is done: a unit per 4
// bytes of 3DES or RC2, per 64 of AES.
func TestPkcs12DecryptionIsCharged(t *testing.T) {
	filler := func(n int) []asn1.RawValue { return []asn1.RawValue{bag(oidP12SecretBag, der(make([]byte, n)))} }
	const more = 64 << 10
	for name, c := range map[string]struct {
		spec         p12Spec
		decryptions  int64
		bytesPerUnit int64
	}{
		"3DES":   {with(normal, func(s *p12Spec) { s.content = "3des" }), 2, 4},
		"RC2-40": {with(normal, func(s *p12Spec) { s.content = "rc2-40" }), 2, 4},
		"AES":    {normal, 2, 64},
		// two readings of the empty password, and go-pkcs12's
		"3DES, empty password": {with(normal, func(s *p12Spec) { s.password, s.mac, s.content = "", "sha1", "3des" }), 3, 4},
	} {
		small, _ := c.spec.build(t)
		big, _ := with(c.spec, func(s *p12Spec) { s.extraBags = filler(more) }).build(t)
		got := workOf(t, big, c.spec.password) - workOf(t, small, c.spec.password)
		if want := c.decryptions * more / c.bytesPerUnit; got < want {
			t.Errorf("%s: %d more bytes of content add %d units, want at least %d", name, more, got, want)
		}
	}

	// A shrouded key's decryption, go-pkcs12's.
	key := func(n int) p12Spec {
		return with(normal, func(s *p12Spec) {
			s.extraBags = []asn1.RawValue{bag(oidP12ShroudedKeyBag, der(tEncryptedKey{Algorithm: pbe3DES(1), Encrypted: make([]byte, n)}))}
		})
	}
	small, _ := key(8).build(t)
	big, _ := key(maxKeyBytes).build(t)
	if got, want := workOf(t, big, "pw")-workOf(t, small, "pw"), int64(maxKeyBytes-8)/4; got < want {
		t.Errorf("a shrouded key of %d bytes instead of 8 adds %d units, want at least %d", maxKeyBytes, got, want)
	}

	// Decryption counts towards the bound: content iterations that fit
	// alone (6 units each: key and IV, 3 blocks, by the walk and by
	// go-pkcs12; about 900,000 units) do not with half a MiB of content
	// to decrypt twice (about 260,000 more). The archive is refused before
	// anything is derived or decrypted.
	heavy := with(normal, func(s *p12Spec) {
		s.content, s.contentIter, s.cheap = "3des", (maxPkcs12Work-200_000)/6, true
		s.extraBags = filler(512 << 10)
	})
	archive, _ := heavy.build(t)
	if err := checkPkcs12(archive, "pw", nil); !isWorkBound(err) {
		t.Fatalf("err = %v, want the bound", err)
	}
	// The same content at OpenSSL's count reads.
	light, keyPEM := with(heavy, func(s *p12Spec) { s.contentIter, s.cheap = 2048, false }).build(t)
	if got, err := readPkcs12Key(nil, "pw", string(light)); err != nil || got != keyPEM {
		t.Fatalf("half a MiB of 3DES content at 2048 iterations: %v", err)
	}
}

// BenchmarkPkcs12AtTheBound reads archives whose work is just under
// maxPkcs12Work with each mix of algorithms, iteration counts, salt,
// password and content sizes: ns/op and cpu-ns/op are what one call may
// cost; ns/unit the cost of one unit of work with that mix. Each mix sets the iteration
// count n of some parts; n is chosen to bring the archive to the bound.
func BenchmarkPkcs12AtTheBound(b *testing.B) {
	// bigContent fills the certificate's safe contents to bring the
	// archive near maxPkcs12Bytes.
	bigContent := []asn1.RawValue{bag(oidP12SecretBag, der(make([]byte, maxPkcs12Bytes-8<<10)))}
	bigSalt := make([]byte, (maxPkcs12Bytes-8<<10)/3) // MAC, content and key
	longPassword := strings.Repeat("p", maxPkcs12Password)
	for name, mix := range map[string]func(s *p12Spec, n int){
		"PBES2 SHA-256, SHA-256 MAC": func(s *p12Spec, n int) { s.macIter, s.contentIter, s.keyIter = n, n, n },
		"PBES2 SHA-1, SHA-1 MAC": func(s *p12Spec, n int) {
			s.mac, s.content, s.key = "sha1", "pbes2-sha1", "pbes2-sha1"
			s.macIter, s.contentIter, s.keyIter = n, n, n
		},
		"PBES2 SHA-512, SHA-512 MAC": func(s *p12Spec, n int) {
			s.mac, s.content, s.key = "sha512", "pbes2-sha512", "pbes2-sha512"
			s.macIter, s.contentIter, s.keyIter = n, n, n
		},
		"3DES, SHA-1 MAC": func(s *p12Spec, n int) {
			s.mac, s.content, s.key = "sha1", "3des", "3des"
			s.macIter, s.contentIter, s.keyIter = n, n, n
		},
		"RC2-40, 3DES key, SHA-1 MAC": func(s *p12Spec, n int) {
			s.mac, s.content, s.key = "sha1", "rc2-40", "3des"
			s.macIter, s.contentIter, s.keyIter = n, n, n
		},
		"SHA-512 MAC alone": func(s *p12Spec, n int) { s.mac, s.content, s.key, s.macIter = "sha512", "plain", "plain", n },
		"PBMAC1 alone":      func(s *p12Spec, n int) { s.mac, s.content, s.key, s.macIter = "pbmac1", "plain", "plain", n },
		// The content is decrypted three times: the walk's two readings of
		// the empty password, and go-pkcs12's.
		"3DES content of 1 MiB, empty password": func(s *p12Spec, n int) {
			s.password, s.mac, s.content, s.key, s.extraBags = "", "sha1", "3des", "plain", bigContent
			s.macIter, s.contentIter = 1, n
		},
		"RC2-40 content of 1 MiB, empty password": func(s *p12Spec, n int) {
			s.password, s.mac, s.content, s.key, s.extraBags = "", "sha1", "rc2-40", "plain", bigContent
			s.macIter, s.contentIter = 1, n
		},
		"PBES2 content of 1 MiB": func(s *p12Spec, n int) {
			s.content, s.key, s.extraBags = "pbes2", "plain", bigContent
			s.macIter, s.contentIter = 1, n
		},
		"3DES, SHA-1 MAC, salts of a third of a MiB, empty password": func(s *p12Spec, n int) {
			s.password, s.mac, s.content, s.key, s.salt = "", "sha1", "3des", "3des", bigSalt
			s.macIter, s.contentIter, s.keyIter = n, n, n
		},
		"3DES, SHA-1 MAC, longest password": func(s *p12Spec, n int) {
			s.password, s.mac, s.content, s.key = longPassword, "sha1", "3des", "3des"
			s.macIter, s.contentIter, s.keyIter = n, n, n
		},
	} {
		spec := func(n int) p12Spec { return with(normal, func(s *p12Spec) { mix(s, n) }) }
		// build returns the archive and its work, or no work when it is
		// over the bound.
		build := func(n int) (p12Spec, []byte, int64) {
			s := spec(n)
			archive, _ := s.build(b)
			var work int64
			err := checkPkcs12(archive, s.password, func(n int64) error { work += n; return nil })
			if isWorkBound(err) {
				return s, archive, 0
			} else if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			return s, archive, work
		}
		// Work is linear in n, give or take the few bytes by which archives
		// of fresh keys differ.
		_, _, at1 := build(1)
		_, _, at1001 := build(1001)
		perN := float64(at1001-at1) / 1000
		n := int(float64(maxPkcs12Work-at1-64) / perN)
		s, archive, units := build(n)
		for units == 0 {
			n -= 1 + int(256/perN)
			s, archive, units = build(n)
		}
		b.Run(name, func(b *testing.B) {
			cpu, measured := processCPU()
			for b.Loop() {
				if _, err := readPkcs12Key(nil, s.password, string(archive)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(units), "ns/unit")
			b.ReportMetric(float64(units)/maxPkcs12Work, "of-bound")
			// CPU time, unlike ns/op, does not grow while other processes
			// wait for the machine.
			if end, ok := processCPU(); measured && ok {
				b.ReportMetric(float64((end-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
