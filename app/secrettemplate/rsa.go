package secrettemplate

import (
	"crypto/rsa"
	"crypto/sha1" // RSA-OAEP with SHA-1 is one of upstream's choices
	"crypto/sha256"
	"crypto/sha512"
	"encoding/pem"
	"errors"
	"hash"
)

// rsaDecrypt decrypts in (the raw ciphertext: pipe base64 through b64dec
// first) with a PEM private key (PKCS#1 or PKCS#8), as upstream: scheme
// "RSA-OAEP" with hash "SHA1", "SHA256" or "SHA512" (anything else, "None"
// included, means SHA-256), or scheme "None", which returns in unchanged.
// Upstream offers no other scheme (no PKCS#1 v1.5). Errors never quote the
// key or the data.
func rsaDecrypt(scheme, hashName, in, privateKey string) (string, error) {
	switch scheme {
	case "None":
		return in, nil
	case "RSA-OAEP":
	default:
		return "", errors.New("unsupported decryption scheme: use RSA-OAEP or None")
	}
	block, _ := pem.Decode([]byte(privateKey))
	if block == nil {
		return "", errors.New("the private key is not PEM")
	}
	if len(block.Bytes) > maxKeyBytes {
		return "", errKeyTooLarge
	}
	key, err := parsePrivateKey(block.Bytes)
	if err != nil {
		return "", err
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return "", errors.New("the private key is not an RSA key")
	}
	out, err := rsa.DecryptOAEP(oaepHash(hashName), nil, rsaKey, []byte(in), nil)
	if err != nil {
		return "", errors.New("RSA-OAEP decryption failed")
	}
	return string(out), nil
}

func oaepHash(name string) hash.Hash {
	switch name {
	case "SHA1":
		return sha1.New()
	case "SHA512":
		return sha512.New()
	default: // "SHA256", "None" and anything unknown, as upstream
		return sha256.New()
	}
}
