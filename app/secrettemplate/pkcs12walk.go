package secrettemplate

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// Reading a PKCS#12 archive runs every key derivation the archive asks for:
// the MAC's, the encrypted content's and each shrouded key bag's, each with
// the iteration count the archive carries. The archive comes from a store a
// tenant may control, so before go-pkcs12 decodes it, eso walks its DER
// structure, adds up that work and refuses an archive that asks for more
// than maxPkcs12Work. The walk reads the encrypted content itself (a key bag
// may hide in it), and refuses whatever it cannot read: an algorithm,
// structure or bag type it does not know is never skipped.
//
// Work is counted in units of about one hash block:
//   - each iteration of a derivation, once per hash-sized block of output it
//     needs: a derivation that needs two blocks of key (3DES's 24 bytes from
//     SHA-1's 20) runs its iterations twice;
//   - the derivation's input, salt and password: a unit per 64 bytes, for
//     each block of output (PKCS#12's own derivation hashes, copies and
//     adds to both for each block; PBKDF2 hashes the salt for each);
//   - hashing the authenticated safe for the MAC: a unit per 64 bytes;
//   - decryption: a unit per 64 bytes of AES, per 4 bytes of 3DES or RC2,
//     the slower ciphers (BenchmarkPkcs12AtTheBound's content mixes cost
//     no more a unit than its derivation mixes).
//
// Hashing with SHA-512 counts 4 times, since it costs four of SHA-1 or
// SHA-256 here (no SHA-512 instructions on common CPUs).
const (
	// maxPkcs12Work bounds the work of reading one archive. Measured with
	// BenchmarkPkcs12AtTheBound on a 2-core AMD EPYC (SHA and AES
	// instructions, Go 1.26): an archive at the bound takes 70 to 190 ms of
	// CPU (best of eight, whatever its mix of algorithms, iterations, salt,
	// password and content sizes; PBKDF2 with HMAC-SHA1 or HMAC-SHA256 is
	// the dearest, 0.17 µs a unit; a MiB of 3DES content decrypted three
	// times 0.11 µs, salts of a third of a MiB or the longest password
	// 0.095 µs). Real archives ask for far less: OpenSSL's 2048
	// iterations (SHA-1 MAC, RC2-40 content, 3DES key: about 16,000
	// units), Windows' 2000, Java's 10,000 (PBES2 with HMAC-SHA256 and
	// AES-256: 40,000); 100,000 iterations of the modern algorithms
	// (400,000 to 500,000 units) and of 3DES with a password (1,000,000,
	// and a few thousand for the salts, password and content) still fit.
	// 3DES at 100,000 with an empty password (1,400,000) does not.
	maxPkcs12Work = 1_100_000
	// maxPkcs12Bytes bounds an archive: a Secret holds at most 1 MiB, and a
	// key with its chain takes a few KiB.
	maxPkcs12Bytes = 1 << 20
	// maxPkcs12Password bounds the password, in bytes. Every derivation
	// hashes the password, and reading an archive copies it many times
	// (its UCS-2 form is twice its size, its runes four times; go-pkcs12
	// copies it again for each derivation and each block of output): a
	// password of 4 MiB from a secret value made an archive of one
	// iteration take 200 ms and allocate 260 MB. PKCS#12 passwords are
	// short: OpenSSL's command line reads at most 1023 bytes of one
	// (APP_PASS_LEN). A longer one is refused before it is converted or
	// copied, and the charge for the password a derivation hashes keeps
	// the longest allowed within maxPkcs12Work's measure.
	maxPkcs12Password = 1 << 10
	// maxPkcs12Safes bounds the content infos of an archive's authenticated
	// safe (go-pkcs12 reads at most 2; eso's own archives have 2).
	maxPkcs12Safes = 8
	// maxPkcs12Bags bounds the bags of an archive: a key and its chain.
	maxPkcs12Bags = 256
	// maxPkcs12Nesting bounds safe contents bags inside safe contents bags.
	maxPkcs12Nesting = 4
)

var (
	// errPkcs12Unread: the archive has a structure or an algorithm the walk
	// does not know, so its work cannot be bounded. It names the part,
	// never a value.
	errPkcs12Unread = errors.New("input is not a PKCS#12 archive eso reads")
	// errPkcs12Password: the archive does not open with the password.
	errPkcs12Password = errors.New("input is not a PKCS#12 archive this password opens")
)

func unread(part string) error { return fmt.Errorf("%w: %s", errPkcs12Unread, part) }

var (
	oidP12Data          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidP12EncryptedData = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}

	oidP12SHA1   = asn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}
	oidP12SHA256 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidP12SHA512 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 3}

	oidP12HMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidP12HMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidP12HMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}

	oidP12PBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidP12PBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidP12PBMAC1 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 14}

	oidP12AES128CBC = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidP12AES192CBC = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidP12AES256CBC = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}

	oidP12PBE3DES   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 3}
	oidP12PBERC2128 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 5}
	oidP12PBERC240  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 6}

	oidP12KeyBag          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 1}
	oidP12ShroudedKeyBag  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidP12CertBag         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}
	oidP12CRLBag          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 4}
	oidP12SecretBag       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 5}
	oidP12SafeContentsBag = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 6}
)

// The archive's structure, as RFC 7292 (PKCS#12), RFC 5652 (CMS) and
// RFC 8018 (PKCS#5) define it.
type (
	p12PFX struct {
		Version  int
		AuthSafe p12ContentInfo
		MacData  p12MacData `asn1:"optional"`
	}
	p12ContentInfo struct {
		ContentType asn1.ObjectIdentifier
		Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
	}
	p12MacData struct {
		Mac struct {
			Algorithm pkix.AlgorithmIdentifier
			Digest    []byte
		}
		MacSalt    []byte
		Iterations int `asn1:"optional,default:1"`
	}
	p12EncryptedData struct {
		Version int
		Content struct {
			ContentType asn1.ObjectIdentifier
			Algorithm   pkix.AlgorithmIdentifier
			Encrypted   []byte `asn1:"tag:0,optional"`
		}
	}
	p12SafeBag struct {
		ID         asn1.ObjectIdentifier
		Value      asn1.RawValue  `asn1:"tag:0,explicit"`
		Attributes []p12Attribute `asn1:"set,optional"`
	}
	p12Attribute struct {
		ID     asn1.ObjectIdentifier
		Values asn1.RawValue `asn1:"set"`
	}
	p12EncryptedKey struct {
		Algorithm pkix.AlgorithmIdentifier
		Encrypted []byte
	}
	// p12PBEParams are the parameters of PKCS#12's own password-based
	// encryption (RFC 7292 appendix C).
	p12PBEParams struct {
		Salt       []byte
		Iterations int
	}
	p12PBES2Params struct {
		KDF    pkix.AlgorithmIdentifier
		Scheme pkix.AlgorithmIdentifier
	}
	p12PBKDF2Params struct {
		Salt       asn1.RawValue
		Iterations int
		KeyLength  int                      `asn1:"optional"`
		PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
	}
	p12PBMAC1Params struct {
		KDF pkix.AlgorithmIdentifier
		MAC pkix.AlgorithmIdentifier
	}
)

// derUnmarshal reads exactly one DER value.
func derUnmarshal(der []byte, v any) error {
	rest, err := asn1.Unmarshal(der, v)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return errors.New("trailing data")
	}
	return nil
}

// p12Password is a password in the two forms an archive uses: PKCS#12's
// own encryption and MAC take it as a zero-terminated UCS-2 string, PBES2
// as UTF-8.
type p12Password struct {
	bmp  []byte
	text string
}

// p12Passwords are the readings of password go-pkcs12 may use: the
// password, and for an empty one also no bytes at all, which go-pkcs12
// falls back to when the MAC says so (some tools write the empty password
// that way).
func p12Passwords(password string) ([]p12Password, error) {
	bmp := make([]byte, 0, 2*len(password)+2)
	for _, r := range password {
		if r > 0xffff {
			return nil, errPkcs12Password // UCS-2 has no such character; go-pkcs12 refuses it too
		}
		bmp = append(bmp, byte(r>>8), byte(r))
	}
	// go-pkcs12 turns the UCS-2 form back into UTF-8 for PBES2, so text
	// that is not UTF-8 becomes U+FFFD, byte by byte, as []rune does.
	readings := []p12Password{{bmp: append(bmp, 0, 0), text: string([]rune(password))}}
	if password == "" {
		readings = append(readings, p12Password{})
	}
	return readings, nil
}

// pkcs12Walk adds up the work of reading one archive.
type pkcs12Walk struct {
	passwords []p12Password
	// pwBytes is the longest form of the password a derivation hashes.
	pwBytes int
	// spend charges work to the render's budget; nil outside a render.
	spend    func(int64) error
	work     int64
	bagCount int
}

// checkPkcs12Sizes refuses an archive or a password too large to read,
// before either is copied or converted.
func checkPkcs12Sizes(archiveBytes int, password string) error {
	if len(password) > maxPkcs12Password {
		return exceeded("the PKCS#12 password is longer than %d bytes", maxPkcs12Password)
	}
	if archiveBytes > maxPkcs12Bytes {
		return exceeded("the PKCS#12 archive is larger than %d bytes", maxPkcs12Bytes)
	}
	return nil
}

// checkPkcs12 walks an archive and refuses it when reading it would take
// more work than maxPkcs12Work (or than the render's budget has left), or
// when it has a part the walk cannot judge. The content it decrypts on the
// way counts too.
func checkPkcs12(der []byte, password string, spend func(int64) error) error {
	if err := checkPkcs12Sizes(len(der), password); err != nil {
		return err
	}
	passwords, err := p12Passwords(password)
	if err != nil {
		return err
	}
	w := &pkcs12Walk{passwords: passwords, pwBytes: max(len(passwords[0].bmp), len(passwords[0].text)), spend: spend}
	var pfx p12PFX
	if err := derUnmarshal(der, &pfx); err != nil {
		return unread("not a PFX")
	}
	if pfx.Version != 3 {
		return unread("PFX version")
	}
	if !pfx.AuthSafe.ContentType.Equal(oidP12Data) {
		return unread("authenticated safe content type")
	}
	var authSafe asn1.RawValue
	if err := derUnmarshal(pfx.AuthSafe.Content.Bytes, &authSafe); err != nil || !isOctetString(authSafe) {
		return unread("authenticated safe")
	}
	if err := w.mac(pfx.MacData, len(authSafe.Bytes)); err != nil {
		return err
	}
	var safes []p12ContentInfo
	if err := derUnmarshal(authSafe.Bytes, &safes); err != nil {
		return unread("authenticated safe")
	}
	if len(safes) > maxPkcs12Safes {
		return exceeded("the PKCS#12 archive has more than %d content infos", maxPkcs12Safes)
	}
	for _, safe := range safes {
		if err := w.contentInfo(safe); err != nil {
			return err
		}
	}
	return nil
}

func isOctetString(v asn1.RawValue) bool {
	return v.Class == asn1.ClassUniversal && v.Tag == asn1.TagOctetString && !v.IsCompound
}

// charge counts work before it is done, by the walk or by go-pkcs12 after it.
func (w *pkcs12Walk) charge(n int64) error {
	if n < 0 || n > maxPkcs12Work-w.work {
		return exceeded("the PKCS#12 archive asks for more than %d units of key derivation and decryption", maxPkcs12Work)
	}
	w.work += n
	if w.spend != nil {
		return w.spend(n)
	}
	return nil
}

// mac counts the MAC's key derivation and its hashing of the
// authenticated safe (message bytes), both run twice for an empty password
// (go-pkcs12 tries it with and without the terminator).
func (w *pkcs12Walk) mac(m p12MacData, message int) error {
	alg := m.Mac.Algorithm.Algorithm
	if len(alg) == 0 {
		return nil // no MAC: go-pkcs12 then takes only the empty password, and derives nothing
	}
	var work int64
	var err error
	switch {
	case alg.Equal(oidP12SHA1), alg.Equal(oidP12SHA256):
		work, err = derivationWork(m.Iterations, 1, 1, len(m.MacSalt)+w.pwBytes)
		work += hashWork(message, 1)
	case alg.Equal(oidP12SHA512):
		work, err = derivationWork(m.Iterations, 1, 4, len(m.MacSalt)+w.pwBytes)
		work += hashWork(message, 4)
	case alg.Equal(oidP12PBMAC1):
		work, err = pbmac1Work(m.Mac.Algorithm, w.pwBytes, message)
	default:
		return unread("MAC algorithm")
	}
	if err != nil {
		return err
	}
	return w.charge(work * int64(len(w.passwords)))
}

// derivationWork is the work of one key derivation: for each of blocks
// blocks of output, its iterations and the hashing of its input (salt and
// password, input bytes), times weight; saturated past the bound.
func derivationWork(iterations, blocks, weight, input int) (int64, error) {
	if iterations < 1 {
		return 0, unread("iteration count")
	}
	if iterations > maxPkcs12Work {
		return maxPkcs12Work + 1, nil
	}
	// input is at most an archive's bytes and a password's few: no overflow.
	return int64(blocks) * (int64(iterations)*int64(weight) + hashWork(input, weight)), nil
}

// hashWork is the work of hashing n bytes once: a unit per 64 bytes, times
// weight.
func hashWork(n, weight int) int64 { return int64(blocksOf(n, 64)) * int64(weight) }

// p12PRF is a PBKDF2 pseudo-random function: its hash, output size and
// weight (see maxPkcs12Work).
type p12PRF struct {
	hash   func() hash.Hash
	size   int
	weight int
}

func prfOf(alg pkix.AlgorithmIdentifier) (p12PRF, error) {
	switch {
	case len(alg.Algorithm) == 0, alg.Algorithm.Equal(oidP12HMACSHA1): // absent: HMAC-SHA1, as RFC 8018
		return p12PRF{sha1.New, sha1.Size, 1}, nil
	case alg.Algorithm.Equal(oidP12HMACSHA256):
		return p12PRF{sha256.New, sha256.Size, 1}, nil
	case alg.Algorithm.Equal(oidP12HMACSHA512):
		return p12PRF{sha512.New, sha512.Size, 4}, nil
	}
	return p12PRF{}, unread("PBKDF2 pseudo-random function")
}

// readPBKDF2 reads PBKDF2 parameters (RFC 8018 appendix A.2).
func readPBKDF2(alg pkix.AlgorithmIdentifier) (p12PBKDF2Params, p12PRF, error) {
	var p p12PBKDF2Params
	if !alg.Algorithm.Equal(oidP12PBKDF2) {
		return p, p12PRF{}, unread("key derivation function")
	}
	if err := derUnmarshal(alg.Parameters.FullBytes, &p); err != nil || !isOctetString(p.Salt) {
		return p, p12PRF{}, unread("PBKDF2 parameters")
	}
	prf, err := prfOf(p.PRF)
	return p, prf, err
}

// pbmac1Work is the work of a PBMAC1 MAC (RFC 9579): PBKDF2 to a key of
// 20 to 64 bytes (go-pkcs12 refuses other lengths before deriving), then
// an HMAC of the message's bytes.
func pbmac1Work(alg pkix.AlgorithmIdentifier, pwBytes, message int) (int64, error) {
	var p p12PBMAC1Params
	if err := derUnmarshal(alg.Parameters.FullBytes, &p); err != nil {
		return 0, unread("PBMAC1 parameters")
	}
	mac, err := prfOf(p.MAC)
	if err != nil {
		return 0, unread("PBMAC1 MAC algorithm")
	}
	kdf, prf, err := readPBKDF2(p.KDF)
	if err != nil {
		return 0, err
	}
	if kdf.KeyLength < 20 || kdf.KeyLength > 64 {
		return 0, unread("PBMAC1 key length")
	}
	work, err := derivationWork(kdf.Iterations, blocksOf(kdf.KeyLength, prf.size), prf.weight, len(kdf.Salt.Bytes)+pwBytes)
	return work + hashWork(message, mac.weight), err
}

func blocksOf(n, size int) int { return (n + size - 1) / size }

// p12Cipher is an encryption of an archive's content or key, read but not
// yet run.
type p12Cipher struct {
	pbes2      bool
	salt       []byte
	iterations int
	keyLen     int
	prf        p12PRF // PBES2
	iv         []byte // PBES2; PKCS#12's own encryption derives it
	block      func(key []byte) (cipher.Block, error)
	// work is the work of deriving the key and IV.
	work int64
	// bytesPerUnit is how many bytes of its decryption make a unit of work.
	bytesPerUnit int
}

// decryptionWork is the work of decrypting n bytes.
func (c *p12Cipher) decryptionWork(n int) int64 { return int64(blocksOf(n, c.bytesPerUnit)) }

// readCipher reads the algorithm of encrypted content or a shrouded key:
// PKCS#12's own encryption with 3DES or RC2 (SHA-1 derivation), or PBES2
// with PBKDF2 and AES-CBC. These are what go-pkcs12 decrypts. pwBytes is
// the length of the password the derivation hashes.
func readCipher(alg pkix.AlgorithmIdentifier, pwBytes int) (*p12Cipher, error) {
	// 3DES and RC2 decrypt many times slower than AES: see the unit's
	// definition above.
	c := &p12Cipher{bytesPerUnit: 4}
	switch {
	case alg.Algorithm.Equal(oidP12PBE3DES):
		c.keyLen, c.block = 24, des.NewTripleDESCipher
	case alg.Algorithm.Equal(oidP12PBERC2128):
		c.keyLen, c.block = 16, rc2Block
	case alg.Algorithm.Equal(oidP12PBERC240):
		c.keyLen, c.block = 5, rc2Block
	case alg.Algorithm.Equal(oidP12PBES2):
		return readPBES2(alg, pwBytes)
	default:
		return nil, unread("encryption algorithm")
	}
	var p p12PBEParams
	if err := derUnmarshal(alg.Parameters.FullBytes, &p); err != nil {
		return nil, unread("PKCS#12 encryption parameters")
	}
	c.salt, c.iterations = p.Salt, p.Iterations
	// The key and, separately, an 8-byte IV, each from SHA-1 blocks.
	var err error
	c.work, err = derivationWork(p.Iterations, blocksOf(c.keyLen, sha1.Size)+1, 1, len(p.Salt)+pwBytes)
	return c, err
}

func rc2Block(key []byte) (cipher.Block, error) { return newRC2Decrypter(key, 8*len(key)) }

func readPBES2(alg pkix.AlgorithmIdentifier, pwBytes int) (*p12Cipher, error) {
	var p p12PBES2Params
	if err := derUnmarshal(alg.Parameters.FullBytes, &p); err != nil {
		return nil, unread("PBES2 parameters")
	}
	kdf, prf, err := readPBKDF2(p.KDF)
	if err != nil {
		return nil, err
	}
	c := &p12Cipher{pbes2: true, salt: kdf.Salt.Bytes, iterations: kdf.Iterations, prf: prf, block: aes.NewCipher, bytesPerUnit: 64}
	switch {
	case p.Scheme.Algorithm.Equal(oidP12AES128CBC):
		c.keyLen = 16
	case p.Scheme.Algorithm.Equal(oidP12AES192CBC):
		c.keyLen = 24
	case p.Scheme.Algorithm.Equal(oidP12AES256CBC):
		c.keyLen = 32
	default:
		return nil, unread("PBES2 encryption scheme")
	}
	var iv asn1.RawValue
	if err := derUnmarshal(p.Scheme.Parameters.FullBytes, &iv); err != nil || !isOctetString(iv) || len(iv.Bytes) != aes.BlockSize {
		return nil, unread("PBES2 IV")
	}
	c.iv = iv.Bytes
	c.work, err = derivationWork(kdf.Iterations, blocksOf(c.keyLen, prf.size), prf.weight, len(c.salt)+pwBytes)
	return c, err
}

// decrypt decrypts content the way go-pkcs12 does, with one reading of the
// password. Its work must have been charged.
func (c *p12Cipher) decrypt(data []byte, pw p12Password) ([]byte, error) {
	var key, iv []byte
	if c.pbes2 {
		k, err := pbkdf2.Key(c.prf.hash, pw.text, c.salt, c.iterations, c.keyLen)
		if err != nil {
			return nil, err
		}
		key, iv = k, c.iv
	} else {
		key = pkcs12KDF(sha1.New, 1, pw.bmp, c.salt, c.iterations, c.keyLen)
		iv = pkcs12KDF(sha1.New, 2, pw.bmp, c.salt, c.iterations, 8)
	}
	block, err := c.block(key)
	if err != nil {
		return nil, err
	}
	return cbcOpen(block, iv, data)
}

// cbcOpen decrypts whole CBC blocks and removes their PKCS#7 padding,
// every byte of it checked.
func cbcOpen(block cipher.Block, iv, data []byte) ([]byte, error) {
	bs := block.BlockSize()
	if len(data) == 0 || len(data)%bs != 0 {
		return nil, errors.New("not whole blocks")
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs || !bytes.Equal(out[len(out)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, errors.New("bad padding")
	}
	return out[:len(out)-pad], nil
}

// pkcs12KDF derives n bytes as RFC 7292 appendix B.2 does for PKCS#12's
// own encryption (id 1 for a key, 2 for an IV) and MAC (id 3).
func pkcs12KDF(newHash func() hash.Hash, id byte, password, salt []byte, iterations, n int) []byte {
	h := newHash()
	u, v := h.Size(), h.BlockSize()
	// repeatTo concatenates copies of b to a multiple of v bytes.
	repeatTo := func(b []byte, size int) []byte {
		out := make([]byte, size)
		for i := range out {
			out[i] = b[i%len(b)]
		}
		return out
	}
	var in []byte // I = S || P
	if len(salt) > 0 {
		in = append(in, repeatTo(salt, v*blocksOf(len(salt), v))...)
	}
	if len(password) > 0 {
		in = append(in, repeatTo(password, v*blocksOf(len(password), v))...)
	}
	diversifier := bytes.Repeat([]byte{id}, v)
	out := make([]byte, 0, n+u)
	a := make([]byte, 0, u)
	for {
		h.Reset()
		h.Write(diversifier)
		h.Write(in)
		a = h.Sum(a[:0])
		for i := 1; i < iterations; i++ {
			h.Reset()
			h.Write(a)
			a = h.Sum(a[:0])
		}
		if out = append(out, a...); len(out) >= n {
			return out[:n]
		}
		// Each v-byte block of I becomes (I_j + B + 1) mod 2^v, B being
		// copies of A.
		b := repeatTo(a, v)
		for j := 0; j < len(in); j += v {
			carry := 1
			for k := v - 1; k >= 0; k-- {
				sum := int(in[j+k]) + int(b[k]) + carry
				in[j+k], carry = byte(sum), sum>>8
			}
		}
	}
}

// contentInfo walks one content info of the authenticated safe: plain
// data, or encrypted data the walk decrypts to see its bags.
func (w *pkcs12Walk) contentInfo(ci p12ContentInfo) error {
	switch {
	case ci.ContentType.Equal(oidP12Data):
		var data []byte
		if err := derUnmarshal(ci.Content.Bytes, &data); err != nil {
			return unread("data content")
		}
		return w.safeContents(data, 0)
	case ci.ContentType.Equal(oidP12EncryptedData):
		var ed p12EncryptedData
		if err := derUnmarshal(ci.Content.Bytes, &ed); err != nil || ed.Version != 0 {
			return unread("encrypted content")
		}
		c, err := readCipher(ed.Content.Algorithm, w.pwBytes)
		if err != nil {
			return err
		}
		// PBES2 reads every password the same way; PKCS#12's own
		// encryption differs with and without the terminator.
		readings := w.passwords
		if c.pbes2 {
			readings = readings[:1]
		}
		// The walk's decryptions, then go-pkcs12's: each derives the key
		// and decrypts all of the content.
		work := c.work + c.decryptionWork(len(ed.Content.Encrypted))
		if err := w.charge(work * int64(len(readings)+1)); err != nil {
			return err
		}
		opened := false
		for _, pw := range readings {
			data, err := c.decrypt(ed.Content.Encrypted, pw)
			if err != nil {
				continue
			}
			// A wrong reading decrypts to noise, which may still unpad but
			// is no list of bags.
			bags, err := readBags(data)
			if err != nil {
				continue
			}
			if err := w.bags(bags, 0); err != nil {
				return err
			}
			opened = true
		}
		if !opened {
			return errPkcs12Password
		}
		return nil
	}
	return unread("content type")
}

func readBags(der []byte) ([]p12SafeBag, error) {
	var bags []p12SafeBag
	return bags, derUnmarshal(der, &bags)
}

// safeContents walks a list of bags.
func (w *pkcs12Walk) safeContents(der []byte, depth int) error {
	bags, err := readBags(der)
	if err != nil {
		return unread("safe contents")
	}
	return w.bags(bags, depth)
}

// bags walks bags: a shrouded key bag's derivation and decryption are work
// for go-pkcs12; certificates and plain keys are not.
func (w *pkcs12Walk) bags(bags []p12SafeBag, depth int) error {
	if w.bagCount += len(bags); w.bagCount > maxPkcs12Bags {
		return exceeded("the PKCS#12 archive has more than %d bags", maxPkcs12Bags)
	}
	for _, bag := range bags {
		switch {
		case bag.ID.Equal(oidP12KeyBag):
			if len(bag.Value.Bytes) > maxKeyBytes {
				return errKeyTooLarge
			}
		case bag.ID.Equal(oidP12ShroudedKeyBag):
			var key p12EncryptedKey
			if err := derUnmarshal(bag.Value.Bytes, &key); err != nil {
				return unread("shrouded key bag")
			}
			if len(key.Encrypted) > maxKeyBytes {
				return errKeyTooLarge
			}
			c, err := readCipher(key.Algorithm, w.pwBytes)
			if err != nil {
				return err
			}
			if err := w.charge(c.work + c.decryptionWork(len(key.Encrypted))); err != nil {
				return err
			}
		case bag.ID.Equal(oidP12CertBag), bag.ID.Equal(oidP12CRLBag), bag.ID.Equal(oidP12SecretBag):
			// nothing to derive
		case bag.ID.Equal(oidP12SafeContentsBag):
			// go-pkcs12 skips these, but a bag inside is walked all the same
			if depth >= maxPkcs12Nesting {
				return unread("safe contents nested too deep")
			}
			if err := w.safeContents(bag.Value.Bytes, depth+1); err != nil {
				return err
			}
		default:
			return unread("bag type")
		}
	}
	return nil
}
