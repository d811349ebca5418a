package server

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin/wire"
)

// targeted is every request that acts through a configuration.
type targeted interface{ GetTarget() *providerv1.Target }

// untargeted are the methods that name no namespace and read nothing: any
// verified caller may call them. Every other method must carry a Target, so
// a new RPC without one is refused until it is listed here on purpose.
var untargeted = map[string]bool{
	providerv1.Info_Handshake_FullMethodName: true,
	healthpb.Health_Check_FullMethodName:     true,
	healthpb.Health_Watch_FullMethodName:     true,
	healthpb.Health_List_FullMethodName:      true,
}

// authorize binds each call to its caller's certificate: eso-core may act
// in any namespace, any other caller only in the namespaces its certificate
// names (wire.IdentityOf). A call outside them is PermissionDenied
// before anything is read. Without TLS (--insecure) there is no identity and
// every caller is treated as core; that mode is for development only.
func authorize(plaintext bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		id, err := callerIdentity(ctx, plaintext)
		if err != nil {
			return nil, err
		}
		if err := permitted(id, info.FullMethod, req); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// callerIdentity is the identity of the verified client certificate.
func callerIdentity(ctx context.Context, plaintext bool) (wire.Identity, error) {
	if plaintext {
		return wire.Identity{Core: true, Name: "plaintext caller"}, nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return wire.Identity{}, status.Error(codes.Unauthenticated, "no peer information")
	}
	tlsInfo, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(tlsInfo.State.VerifiedChains) == 0 || len(tlsInfo.State.VerifiedChains[0]) == 0 {
		return wire.Identity{}, status.Error(codes.Unauthenticated, "no verified client certificate")
	}
	return wire.IdentityOf(tlsInfo.State.VerifiedChains[0][0]), nil
}

// permitted checks that id may make the call: every namespace the request
// names must be one id may act in.
func permitted(id wire.Identity, method string, req any) error {
	if untargeted[method] {
		return nil
	}
	r, ok := req.(targeted)
	if !ok {
		return status.Errorf(codes.PermissionDenied, "%s names no target and is not open to every caller", method)
	}
	if id.Core {
		return nil
	}
	t := r.GetTarget()
	for _, ns := range []string{t.GetNamespace(), t.GetCredentialsNamespace()} {
		if ns != "" && !id.MayActIn(ns) {
			return status.Errorf(codes.PermissionDenied, "caller %q may not act in namespace %q (its certificate allows: %v)", id.Name, ns, id.Namespaces)
		}
	}
	if t.GetNamespace() == "" && t.GetCredentialsNamespace() == "" {
		return status.Errorf(codes.PermissionDenied, "caller %q must name the namespace it acts in", id.Name)
	}
	return nil
}

// authorizeStreams refuses every stream but the health service's: the
// provider protocol has none, so a stream is never a way around authorize.
func authorizeStreams(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !untargeted[info.FullMethod] {
		return status.Errorf(codes.PermissionDenied, "%s is not open to any caller", info.FullMethod)
	}
	return handler(srv, ss)
}
