// Package logging is how every eso process logs, core, provider mode or a
// provider built with package sdk: one format and level flags (Setup), and
// at the default level one line when an object's state changes, not one
// per retry.
package logging

import "github.com/go-logr/logr"

// reconcilerError is the message controller-runtime logs, at error level,
// for every error a reconcile returns: once per retry of a failing object.
const reconcilerError = "Reconciler error"

// DemoteReconcileErrors returns l with controller-runtime's per-retry
// "Reconciler error" lines moved to debug (V(1)). eso's controllers log
// each change of an object's state themselves, at info, and the condition
// holds the current cause; the retries stay visible with --log-level=debug.
func DemoteReconcileErrors(l logr.Logger) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	return logr.New(demoting{l.GetSink()})
}

type demoting struct{ logr.LogSink }

func (d demoting) Error(err error, msg string, kv ...any) {
	if msg != reconcilerError {
		d.LogSink.Error(err, msg, kv...)
		return
	}
	if d.LogSink.Enabled(1) {
		d.LogSink.Info(1, msg, append(kv, "error", err.Error())...)
	}
}

func (d demoting) WithValues(kv ...any) logr.LogSink { return demoting{d.LogSink.WithValues(kv...)} }
func (d demoting) WithName(name string) logr.LogSink { return demoting{d.LogSink.WithName(name)} }

// WithCallDepth keeps the caller reported right when the sink supports it.
func (d demoting) WithCallDepth(depth int) logr.LogSink {
	if s, ok := d.LogSink.(logr.CallDepthLogSink); ok {
		return demoting{s.WithCallDepth(depth)}
	}
	return d
}

// warner writes warnings; set by the process's logging setup (zap has a
// warning level, logr does not).
var warner func(msg string, kv ...any)

// SetWarner makes Warn write through w, e.g. a zap logger's Warnw.
func SetWarner(w func(msg string, kv ...any)) { warner = w }

// Warn logs msg as a warning: at warning level where the process's logger
// has one, else as an info line of l.
func Warn(l logr.Logger, msg string, kv ...any) {
	if warner != nil {
		warner(msg, kv...)
		return
	}
	l.Info("WARNING: "+msg, kv...)
}
