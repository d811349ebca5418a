package secrettemplate

import (
	"encoding/base64"
	"errors"
	"strconv"

	"golang.org/x/crypto/blowfish"
)

// bcrypt as OpenBSD defines it ($2a$), over x/crypto's Blowfish, because
// eso needs to choose the salt: x/crypto/bcrypt draws it at random, and a
// random salt would rewrite the Secret at every refresh. The steps are
// x/crypto/bcrypt's (its expensive key setup, then 64 encryptions of the
// magic text), so the result verifies with any bcrypt checker.

// bcryptCost is the cost of upstream's htpasswd (the library's default).
const bcryptCost = 10

// bcryptMaxPassword is the longest password bcrypt reads; upstream refuses
// longer ones rather than ignoring the rest.
const bcryptMaxPassword = 72

var errBcryptPasswordTooLong = errors.New("bcrypt: password length exceeds 72 bytes")

// bcryptEncoding is bcrypt's base64 alphabet, without padding.
var bcryptEncoding = base64.NewEncoding("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789").WithPadding(base64.NoPadding)

// bcryptHash is the modular crypt string $2a$<cost>$<salt><hash> of
// password under a 16-byte salt.
func bcryptHash(password []byte, salt [16]byte, cost int) (string, error) {
	if len(password) > bcryptMaxPassword {
		return "", errBcryptPasswordTooLong
	}
	if cost < 4 || cost > 31 {
		return "", errors.New("bcrypt: cost outside 4..31")
	}
	// C implementations expand the key with its terminating NUL; so does
	// every hash in the wild.
	key := append(append(make([]byte, 0, len(password)+1), password...), 0)
	c, err := blowfish.NewSaltedCipher(key, salt[:])
	if err != nil {
		return "", err
	}
	for range 1 << cost {
		blowfish.ExpandKey(key, c)
		blowfish.ExpandKey(salt[:], c)
	}
	text := []byte("OrpheanBeholderScryDoubt")
	for i := 0; i < len(text); i += 8 {
		for range 64 {
			c.Encrypt(text[i:i+8], text[i:i+8])
		}
	}
	costDigits := strconv.Itoa(cost)
	if cost < 10 {
		costDigits = "0" + costDigits
	}
	// Only 23 of the 24 bytes are encoded, as in the original.
	return "$2a$" + costDigits + "$" + bcryptEncoding.EncodeToString(salt[:]) + bcryptEncoding.EncodeToString(text[:23]), nil
}
