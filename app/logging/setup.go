package logging

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// New is the logger of an eso process, or of a provider built with the
// sdk package: level is debug, info or error; format json, or text (also
// console). Stack traces are kept for panics: an expected error (a
// provider refusing, an API conflict) is one line, not a page. Warnings
// (Warn) go through it at zap's warning level.
func New(level, format string) (logr.Logger, error) {
	opts := zap.Options{StacktraceLevel: zapcore.PanicLevel}
	switch level {
	case "debug":
		opts.Level = zapcore.DebugLevel
	case "info":
		opts.Level = zapcore.InfoLevel
	case "error":
		opts.Level = zapcore.ErrorLevel
	default:
		return logr.Logger{}, fmt.Errorf("invalid --log-level %q: debug, info or error", level)
	}
	switch format {
	case "json":
	case "text", "console":
		opts.NewEncoder = func(o ...zap.EncoderConfigOption) zapcore.Encoder {
			ec := uberzap.NewProductionEncoderConfig()
			ec.EncodeTime = zapcore.ISO8601TimeEncoder
			for _, f := range o {
				f(&ec)
			}
			return zapcore.NewConsoleEncoder(ec)
		}
	default:
		return logr.Logger{}, fmt.Errorf("invalid --log-format %q: json or text", format)
	}
	zl := zap.NewRaw(zap.UseFlagOptions(&opts))
	SetWarner(zl.Sugar().Warnw)
	return zapr.NewLogger(zl), nil
}
