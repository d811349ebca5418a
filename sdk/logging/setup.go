package logging

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// levels are the values of --log-level.
var levels = map[string]zapcore.Level{"debug": zapcore.DebugLevel, "info": zapcore.InfoLevel, "error": zapcore.ErrorLevel}

// CheckLevel refuses a --log-level that is not debug, info or error.
func CheckLevel(level string) error {
	if _, ok := levels[level]; !ok {
		return fmt.Errorf("invalid --log-level %q: debug, info or error", level)
	}
	return nil
}

// CheckFormat refuses a --log-format that is not json or text (console is
// text's older name).
func CheckFormat(format string) error {
	switch format {
	case "json", "text", "console":
		return nil
	}
	return fmt.Errorf("invalid --log-format %q: json or text", format)
}

// Setup makes the logger of an eso process, or of a provider built with
// the sdk package: level is debug, info or error; format json, or text
// (also console). Stack traces are kept for panics: an expected error (a
// provider refusing, an API conflict) is one line, not a page. Warnings
// (Warn) go through it at zap's warning level. klog, which client-go and
// leader election write through, is routed through the same logger, so no
// klog text line lands among the JSON ones.
func Setup(level, format string) (logr.Logger, error) {
	if err := errors.Join(CheckLevel(level), CheckFormat(format)); err != nil {
		return logr.Logger{}, err
	}
	opts := zap.Options{StacktraceLevel: zapcore.PanicLevel, Level: levels[level]}
	if format != "json" {
		opts.NewEncoder = func(o ...zap.EncoderConfigOption) zapcore.Encoder {
			ec := uberzap.NewProductionEncoderConfig()
			ec.EncodeTime = zapcore.ISO8601TimeEncoder
			for _, f := range o {
				f(&ec)
			}
			return zapcore.NewConsoleEncoder(ec)
		}
	}
	opts.ZapOpts = append(opts.ZapOpts, uberzap.WrapCore(newLazyFields))
	zl := zap.NewRaw(zap.UseFlagOptions(&opts))
	SetWarner(zl.Sugar().Warnw)
	l := zapr.NewLogger(zl)
	klog.SetLogger(l)
	return l, nil
}
