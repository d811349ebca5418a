package server

import (
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// wireRequests are fresh instances of every request the server accepts.
func wireRequests() map[string]func() proto.Message {
	return map[string]func() proto.Message{
		providerv1.SecretStoreProvider_GetSecret_FullMethodName:     func() proto.Message { return &providerv1.GetSecretRequest{} },
		providerv1.SecretStoreProvider_GetAllSecrets_FullMethodName: func() proto.Message { return &providerv1.GetAllSecretsRequest{} },
		providerv1.SecretStoreProvider_PushSecret_FullMethodName:    func() proto.Message { return &providerv1.PushSecretRequest{} },
		providerv1.SecretStoreProvider_DeleteSecret_FullMethodName:  func() proto.Message { return &providerv1.DeleteSecretRequest{} },
		providerv1.SecretStoreProvider_SecretExists_FullMethodName:  func() proto.Message { return &providerv1.SecretExistsRequest{} },
		providerv1.SecretStoreProvider_Validate_FullMethodName:      func() proto.Message { return &providerv1.ValidateRequest{} },
		providerv1.SecretStoreProvider_Capabilities_FullMethodName:  func() proto.Message { return &providerv1.CapabilitiesRequest{} },
		providerv1.SecretStoreProvider_CheckAuth_FullMethodName:     func() proto.Message { return &providerv1.CheckAuthRequest{} },
		providerv1.GeneratorProvider_Generate_FullMethodName:        func() proto.Message { return &providerv1.GenerateRequest{} },
		providerv1.GeneratorProvider_Cleanup_FullMethodName:         func() proto.Message { return &providerv1.CleanupRequest{} },
		providerv1.Info_Handshake_FullMethodName:                    func() proto.Message { return &providerv1.HandshakeRequest{} },
	}
}

// FuzzWireDecode feeds arbitrary bytes to both ends' decoding: the server's
// (every request message, its authorization and the conversion of its target,
// remote reference and find) and core's (a status with details, as a
// provider endpoint a tenant controls may send). None may panic, and an
// identity bound to one namespace is never let into another.
func FuzzWireDecode(f *testing.F) {
	target := &providerv1.Target{Kind: "Fake", Name: "demo", Namespace: "team-a", CredentialsNamespace: "team-a"}
	for _, m := range []proto.Message{
		&providerv1.GetSecretRequest{Target: target, Ref: &providerv1.RemoteRef{Key: "db", Property: "password", Version: "2"}},
		&providerv1.GetAllSecretsRequest{Target: target, Find: &providerv1.Find{Tags: map[string]string{"team": "a"}}},
		&providerv1.PushSecretRequest{Target: target, RemoteKey: "db", Property: "p", Value: []byte("v")},
		&providerv1.GenerateRequest{Target: target},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	detail, _ := anypb.New(&providerv1.ErrorReason{Reason: "SECRET_NOT_FOUND"})
	st, _ := proto.Marshal(&spb.Status{Code: 5, Message: "not found", Details: []*anypb.Any{detail}})
	f.Add(st)

	bound := wire.Identity{Namespaces: []string{"team-a"}, Name: "fuzz"}
	f.Fuzz(func(t *testing.T, data []byte) {
		for method, fresh := range wireRequests() {
			req := fresh()
			if proto.Unmarshal(data, req) != nil {
				continue
			}
			if err := permitted(bound, method, req); err == nil {
				if r, ok := req.(targeted); ok {
					for _, ns := range []string{r.GetTarget().GetNamespace(), r.GetTarget().GetCredentialsNamespace()} {
						if ns != "" && ns != "team-a" {
							t.Fatalf("%s: a caller bound to team-a was let into %q", method, ns)
						}
					}
				}
			}
			if r, ok := req.(targeted); ok {
				_, _, _ = checkTarget(r.GetTarget(), true)
			}
			if r, ok := req.(interface{ GetRef() *providerv1.RemoteRef }); ok {
				_ = wire.FromRemoteRef(r.GetRef())
			}
			if r, ok := req.(interface{ GetFind() *providerv1.Find }); ok {
				_ = wire.FromFind(r.GetFind())
			}
		}
		var s spb.Status
		if proto.Unmarshal(data, &s) == nil {
			_ = wire.FromStatus(status.ErrorProto(&s))
		}
	})
}
