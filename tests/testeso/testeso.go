// Package testeso runs eso's core modules, wired by fx as in production,
// against a control plane from testenv.
package testeso

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"k8s.io/client-go/rest"

	"github.com/eso-dev/eso/app"
	"github.com/eso-dev/eso/app/config"
)

// Config is eso's configuration for tests: no metrics or health servers, no
// leader election, and several instances allowed in one process.
func Config() config.Config {
	cfg := config.Default()
	cfg.MetricsAddr, cfg.HealthAddr = "0", "0"
	cfg.SkipControllerNameValidation = true
	return cfg
}

// Run runs eso against the API server at rc until the test ends. extra options
// may replace or decorate parts (fx.Replace, fx.Decorate).
func Run(t testing.TB, rc *rest.Config, cfg config.Config, extra ...fx.Option) {
	t.Helper()
	stop := Start(t, rc, cfg, extra...)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stopping eso: %v", err)
		}
	})
}

// Start runs eso against the API server at rc and returns the function that
// stops it, for tests that stop one instance and start another (a restart).
func Start(t testing.TB, rc *rest.Config, cfg config.Config, extra ...fx.Option) (stop func() error) {
	t.Helper()
	opts := []fx.Option{
		fx.Supply(cfg),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		app.CoreModules(),
		fx.Supply(rest.CopyConfig(rc)),
	}
	application := fx.New(append(opts, extra...)...)
	if err := application.Err(); err != nil {
		t.Fatalf("building eso: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := application.Start(ctx); err != nil {
		t.Fatalf("starting eso: %v", err)
	}
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			// Past controller-runtime's own 30 s graceful shutdown, so that a
			// stop starved of CPU by the tests running beside it (two cores,
			// the race detector) finishes, while a stop that hangs still fails.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err = application.Stop(ctx); err != nil {
				err = fmt.Errorf("%w (goroutines at the deadline: %s)", err, dumpGoroutines())
			}
		})
		return err
	}
}

// dumpGoroutines writes every goroutine's stack to a file kept after the
// test, so a stop that misses its deadline shows what was still running.
func dumpGoroutines() string {
	f, err := os.CreateTemp("", "eso-stop-goroutines-*.txt")
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if err := pprof.Lookup("goroutine").WriteTo(f, 2); err != nil {
		return err.Error()
	}
	return f.Name()
}
