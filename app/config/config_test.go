package config

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestProviderModeFlags(t *testing.T) {
	tlsFlags := []string{"--tls-cert-file=tls.crt", "--tls-key-file=tls.key", "--tls-client-ca-file=ca.crt"}
	for name, tc := range map[string]struct {
		args    []string
		wantErr string
	}{
		"mTLS":                     {append([]string{"--mode=provider"}, tlsFlags...), ""},
		"insecure":                 {[]string{"--mode=provider", "--insecure"}, ""},
		"no TLS material":          {[]string{"--mode=provider"}, "needs --tls-cert-file, --tls-key-file, --tls-client-ca-file; pass --insecure"},
		"no client CA":             {[]string{"--mode=provider", "--tls-cert-file=a", "--tls-key-file=b"}, "needs --tls-client-ca-file;"},
		"insecure with TLS":        {append([]string{"--mode=provider", "--insecure"}, tlsFlags...), "cannot be combined with --tls-cert-file, --tls-key-file, --tls-client-ca-file"},
		"empty listen address":     {[]string{"--mode=provider", "--insecure", "--grpc-bind-address="}, "--grpc-bind-address may not be empty"},
		"kind twice":               {[]string{"--mode=provider", "--insecure", "--provider-kinds=Fake,Vault,Fake"}, "lists Fake twice"},
		"no kind":                  {[]string{"--mode=provider", "--insecure", "--provider-kinds= , "}, "--provider-kinds is empty"},
		"provider flags in core":   {[]string{"--insecure"}, "apply only to --mode=provider"},
		"provider kinds in core":   {[]string{"--provider-kinds=Fake"}, "apply only to --mode=provider"},
		"core ignores provider ok": {[]string{"--mode=core"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(tc.args, io.Discard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestProviderModeDefaults(t *testing.T) {
	cfg, err := Parse([]string{"--mode=provider", "--insecure", "--provider-kinds=AWSSecretManager, Vault"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GRPCAddr != ":8443" {
		t.Errorf("listen address %q, want :8443", cfg.GRPCAddr)
	}
	if !slices.Equal(cfg.ProviderKinds, []string{"AWSSecretManager", "Vault"}) {
		t.Errorf("kinds %q", cfg.ProviderKinds)
	}
}

func TestNamespaceList(t *testing.T) {
	cfg, err := Parse([]string{"--namespace=team-a, team-b,"}, io.Discard)
	if err != nil || !slices.Equal(cfg.Namespaces(), []string{"team-a", "team-b"}) {
		t.Fatalf("namespaces %v, %v", cfg.Namespaces(), err)
	}
	if _, err := Parse([]string{"--namespace=team-a,Team_B"}, io.Discard); err == nil || !strings.Contains(err.Error(), `invalid --namespace "Team_B"`) {
		t.Fatalf("an invalid namespace: %v", err)
	}
	if cfg, err := Parse(nil, io.Discard); err != nil || len(cfg.Namespaces()) != 0 {
		t.Fatalf("default: %v, %v", cfg.Namespaces(), err)
	}
}

func TestShardsFlag(t *testing.T) {
	for name, tc := range map[string]struct {
		args    []string
		sharded bool
		wantErr string
	}{
		"off by default":                 {nil, false, ""},
		"auto":                           {[]string{"--shards=auto"}, true, ""},
		"unknown value":                  {[]string{"--shards=3"}, false, `invalid --shards "3": "off" or "auto"`},
		"provider mode":                  {[]string{"--mode=provider", "--insecure", "--shards=auto"}, false, "--shards applies to --mode=core only"},
		"renew after expiry":             {[]string{"--shards=auto", "--leader-election-renew-deadline=20s"}, false, "retry-period < --leader-election-renew-deadline < --leader-election-lease-duration"},
		"retry after renewal":            {[]string{"--shards=auto", "--leader-election-retry-period=12s"}, false, "retry-period < --leader-election-renew-deadline"},
		"odd durations without sharding": {[]string{"--leader-election-renew-deadline=20s"}, false, ""},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse(tc.args, io.Discard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case err == nil && cfg.Sharded() != tc.sharded:
				t.Fatalf("Sharded() = %v", cfg.Sharded())
			}
		})
	}
}
