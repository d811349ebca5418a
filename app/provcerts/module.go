package provcerts

import (
	"time"

	"go.uber.org/fx"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eso-dev/eso/app/config"
)

// Module runs the Issuer in core mode when --provider-certificates-namespace
// is set, as a leader-elected runnable of the manager.
var Module = fx.Module("provider-certificates",
	fx.Invoke(func(mgr ctrl.Manager, cfg config.Config) error {
		if cfg.ProviderCertsNamespace == "" {
			return nil
		}
		return mgr.Add(&Issuer{
			Client: mgr.GetClient(),
			Reader: mgr.GetAPIReader(),
			Config: Config{Namespace: cfg.ProviderCertsNamespace, DNSNames: cfg.ProviderCertsDNSNames},
			Now:    time.Now,
		})
	}),
)
