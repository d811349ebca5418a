package logging

import (
	"testing"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// withCounter counts the With calls that reach the core under lazyFields.
type withCounter struct {
	zapcore.Core
	withs *int
}

func (c withCounter) With(fields []zapcore.Field) zapcore.Core {
	*c.withs++
	return withCounter{c.Core.With(fields), c.withs}
}

// TestFieldsAreEncodedOnlyForEntriesWritten: a logger's fields reach the
// core only when an entry at an enabled level is written, all of them at
// once, and each entry carries them.
func TestFieldsAreEncodedOnlyForEntriesWritten(t *testing.T) {
	observed, logs := observer.New(zapcore.InfoLevel)
	withs := 0
	core := newLazyFields(withCounter{observed, &withs})
	reconcile := core.With([]zapcore.Field{{Key: "name", Type: zapcore.StringType, String: "db"}}).
		With([]zapcore.Field{{Key: "reconcileID", Type: zapcore.StringType, String: "1"}})
	if ce := reconcile.Check(zapcore.Entry{Level: zapcore.DebugLevel, Message: "quiet"}, nil); ce != nil {
		t.Fatal("a debug entry was checked in at info")
	}
	if withs != 0 {
		t.Fatalf("%d With calls reached the core before any entry was written", withs)
	}
	for range 2 {
		if ce := reconcile.Check(zapcore.Entry{Level: zapcore.InfoLevel, Message: "synced"}, nil); ce != nil {
			ce.Write()
		}
	}
	if withs != 1 {
		t.Errorf("%d With calls reached the core, want one for both entries", withs)
	}
	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("%d entries written, want 2", len(entries))
	}
	for _, e := range entries {
		if got := e.ContextMap(); got["name"] != "db" || got["reconcileID"] != "1" {
			t.Errorf("entry %q carries %v, want name and reconcileID", e.Message, got)
		}
	}
	// A sibling's fields are its own.
	other := core.With([]zapcore.Field{{Key: "name", Type: zapcore.StringType, String: "other"}})
	if ce := other.Check(zapcore.Entry{Level: zapcore.InfoLevel, Message: "other"}, nil); ce != nil {
		ce.Write()
	}
	if got := logs.All()[2].ContextMap(); len(got) != 1 || got["name"] != "other" {
		t.Errorf("sibling carries %v", got)
	}
}
