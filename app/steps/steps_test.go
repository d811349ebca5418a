package steps

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type scope struct{ ran []string }

type outcome int

const (
	next outcome = iota
	stop
)

func record(name string, out outcome, err error) Step[*scope, outcome] {
	return func(_ context.Context, s *scope) (outcome, error) {
		s.ran = append(s.ran, name)
		return out, err
	}
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		steps   []Step[*scope, outcome]
		wantRan []string
		wantOut outcome
		wantErr error
	}{
		"every step lets the next run": {
			steps:   []Step[*scope, outcome]{record("a", next, nil), record("b", next, nil)},
			wantRan: []string{"a", "b"}, wantOut: next,
		},
		"an outcome ends the run": {
			steps:   []Step[*scope, outcome]{record("a", stop, nil), record("b", next, nil)},
			wantRan: []string{"a"}, wantOut: stop,
		},
		"an error ends the run": {
			steps:   []Step[*scope, outcome]{record("a", next, nil), record("b", next, boom), record("c", next, nil)},
			wantRan: []string{"a", "b"}, wantOut: next, wantErr: boom,
		},
		"no steps": {wantOut: next},
	} {
		s := &scope{}
		out, err := Run(context.Background(), s, tc.steps...)
		if out != tc.wantOut || !errors.Is(err, tc.wantErr) || !slices.Equal(s.ran, tc.wantRan) {
			t.Errorf("%s: ran %v, got %v, %v; want %v, %v, %v", name, s.ran, out, err, tc.wantRan, tc.wantOut, tc.wantErr)
		}
	}
}
