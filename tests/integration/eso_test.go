package integration

import (
	"testing"

	"go.uber.org/fx"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/tests/testenv"
	"github.com/eso-dev/eso/tests/testeso"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func testConfig() config.Config { return testeso.Config() }

func runEso(t testing.TB, cfg config.Config, extra ...fx.Option) {
	testeso.Run(t, env.Config, cfg, extra...)
}
