package secrettemplate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/sprig/v3"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// TestBcryptKnownAnswer: a published bcrypt hash (salt and hash of the
// password "allmine", from the Go bcrypt package's tests).
func TestBcryptKnownAnswer(t *testing.T) {
	const want = "$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga"
	got, err := bcryptHash([]byte("allmine"), saltOf(t, want), 10)
	if err != nil || got != want {
		t.Errorf("bcrypt = %q, %v; want %q", got, err, want)
	}
}

// TestBcryptMatchesSprig: sprig's htpasswd (the bcrypt every Go program
// uses, under a random salt) and eso's give the same hash for that salt.
func TestBcryptMatchesSprig(t *testing.T) {
	sprigHtpasswd := sprig.TxtFuncMap()["htpasswd"].(func(string, string) string)
	for _, pw := range []string{"", "a", "FZ4jR;l]ON;pHKi=_'zh79P", "ünïcödé", strings.Repeat("x", 72)} {
		line := sprigHtpasswd("u", pw)
		hash := strings.TrimPrefix(line, "u:")
		got, err := bcryptHash([]byte(pw), saltOf(t, hash), 10)
		if err != nil || got != hash {
			t.Errorf("password %q: eso %q, %v; sprig %q", pw, got, err, hash)
		}
	}
}

func saltOf(t *testing.T, hash string) [16]byte {
	t.Helper()
	var salt [16]byte
	b, err := bcryptEncoding.DecodeString(hash[7:29])
	if err != nil || len(b) != 16 {
		t.Fatalf("salt of %q: %v", hash, err)
	}
	copy(salt[:], b)
	return salt
}

func TestHtpasswd(t *testing.T) {
	if got := htpasswd("foo1", "FZ4jR;l]ON;pHKi=_'zh79P", "sha"); got != "foo1:{SHA}wtdJD6OIjUniEJkTlewnKzfFxA4=" {
		t.Errorf("sha: %q", got)
	}
	// bcrypt at cost 10 must fit a render's time budget twice over;
	// the fastest of three tries is the cost, not the machine's load.
	took := time.Duration(1<<63 - 1)
	var line string
	for range 3 {
		start := time.Now()
		line = htpasswd("admin", "s3cr3t", "bcrypt")
		took = min(took, time.Since(start))
	}
	if took > maxRenderTime/2 {
		t.Errorf("one bcrypt line took %s, over half the render budget", took)
	}
	if !strings.HasPrefix(line, "admin:$2a$10$") || len(line) != len("admin:")+60 {
		t.Fatalf("bcrypt line %q", line)
	}
	hash := strings.TrimPrefix(line, "admin:")
	if again, _ := bcryptHash([]byte("s3cr3t"), saltOf(t, hash), 10); again != hash {
		t.Error("the line does not verify")
	}
	if htpasswd("admin", "s3cr3t", "") != line {
		t.Error("the same input must give the same line (no rewrite on refresh)")
	}
	if htpasswd("admin", "other", "") == line || htpasswd("root", "s3cr3t", "") == line {
		t.Error("another input gave the same line")
	}
	// Upstream writes its failures as the result.
	if got := htpasswd("a:b", "pw", "sha"); got != "invalid username: a:b" {
		t.Errorf("user with a colon: %q", got)
	}
	if got := htpasswd("u", strings.Repeat("x", 73), ""); got != "u:failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes" {
		t.Errorf("long password: %q", got)
	}
}

// TestSlowFunctionsStayInTheBudget: each bcrypt takes tens of
// milliseconds; a template calling it in a loop is stopped by the render's
// time bound, not after the loop.
func TestSlowFunctionsStayInTheBudget(t *testing.T) {
	start := time.Now()
	_, err := Render(&esv1.ExternalSecretTemplate{Data: map[string]string{
		"k": `{{ range 10000 }}{{ htpasswd "u" (toString .) "" }}{{ end }}`,
	}}, fetched, Sources{})
	if took := time.Since(start); took > 3*maxRenderTime {
		t.Errorf("took %s", took)
	}
	if !errors.Is(err, ErrRenderTime) {
		t.Errorf("err = %v, want the render's time bound", err)
	}
}
