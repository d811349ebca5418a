package logging

import (
	"slices"
	"sync"

	"go.uber.org/zap/zapcore"
)

// lazyFields is a zap core that holds the fields of With until an entry is
// written. Every reconcile's logger carries its object's name and the
// reconcile's ID, and at the default level most reconciles write nothing:
// encoding those fields up front was the largest allocation in eso's first
// sync of 10,000 ExternalSecrets. Field values are encoded when the first
// entry is, so they must not change after With (eso passes names). zap's
// own zapcore.NewLazyWith encodes a parent's fields as soon as a child is
// made, and controller-runtime makes two loggers deep per reconcile.
type lazyFields struct {
	zapcore.Core // without fields

	fields []zapcore.Field
	once   sync.Once
	with   zapcore.Core // Core with fields, once an entry needed it
}

func newLazyFields(core zapcore.Core) zapcore.Core { return &lazyFields{Core: core} }

func (c *lazyFields) With(fields []zapcore.Field) zapcore.Core {
	return &lazyFields{Core: c.Core, fields: append(slices.Clip(c.fields), fields...)}
}

func (c *lazyFields) withFields() zapcore.Core {
	c.once.Do(func() {
		c.with = c.Core
		if len(c.fields) > 0 {
			c.with = c.Core.With(c.fields)
		}
	})
	return c.with
}

func (c *lazyFields) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.Enabled(e.Level) {
		return ce
	}
	return c.withFields().Check(e, ce)
}

func (c *lazyFields) Write(e zapcore.Entry, fields []zapcore.Field) error {
	return c.withFields().Write(e, fields)
}
