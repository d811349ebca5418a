package secrettemplate

import (
	"crypto/hmac"
	"crypto/sha1" // the {SHA} htpasswd format is SHA-1 by definition
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// htpasswd is upstream's htpasswd: one "user:hash" line of an Apache
// htpasswd file. hashAlgorithm "sha" gives {SHA} (base64 of SHA-1);
// anything else gives bcrypt at cost 10. Like upstream it writes its
// failures as its result: a user name with ":" and a password longer than
// bcrypt reads.
//
// Unlike upstream, the bcrypt salt is not random: it is an HMAC of the user
// name and password, so the same input gives the same line and a refresh
// that changes nothing does not rewrite the Secret. Any bcrypt verifier
// accepts the line; the price is that equal user names and passwords give
// equal lines (so does {SHA}, without any salt).
func htpasswd(username, password, hashAlgorithm string) string {
	if strings.Contains(username, ":") {
		return "invalid username: " + username
	}
	if hashAlgorithm == "sha" {
		sum := sha1.Sum([]byte(password))
		return username + ":{SHA}" + base64.StdEncoding.EncodeToString(sum[:])
	}
	hash, err := bcryptHash([]byte(password), htpasswdSalt(username, password), bcryptCost)
	if err != nil {
		hash = "failed to encrypt string with bcrypt: " + err.Error()
	}
	return username + ":" + hash
}

// htpasswdSalt derives a bcrypt salt from the user name and password.
func htpasswdSalt(username, password string) [16]byte {
	m := hmac.New(sha256.New, []byte("eso htpasswd bcrypt salt v1"))
	fmt.Fprintf(m, "%d:%s;%d:%s;", len(username), username, len(password), password)
	var salt [16]byte
	copy(salt[:], m.Sum(nil))
	return salt
}
