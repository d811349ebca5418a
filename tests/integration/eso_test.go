package integration

import (
	"testing"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/tests/testenv"
	"github.com/eso-dev/eso/tests/testeso"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func testConfig() config.Config { return testeso.Config() }

func runEso(t testing.TB, cfg config.Config) { testeso.Run(t, env.Config, cfg) }
