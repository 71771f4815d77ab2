package admissionextension

import (
	"context"

	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var _ extensionmiddleware.GRPCClient = (*admission)(nil)

// GetGRPCClientOptions is the other side of admission, on an exporter to
// the next tier (the agent's load-balancing exporter to its gateways): a
// refusal of this collector's credentials (Unauthenticated,
// PermissionDenied) comes back as Unavailable, so that the sending queue
// keeps the request and retries it until the credentials are fixed. The
// OTLP exporter treats those codes as permanent, and the queue would drop
// what it had accepted. Each retry fails as a send to that gateway, which
// the collector counts (otelcol_loadbalancer_backend_outcome) and
// ProgressSendFailures alerts on.
func (*admission) GetGRPCClientOptions(context.Context) ([]grpc.DialOption, error) {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(retryRefusedCredentials)}, nil
}

func retryRefusedCredentials(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if s, ok := status.FromError(err); ok && (s.Code() == codes.Unauthenticated || s.Code() == codes.PermissionDenied) {
		return status.Errorf(codes.Unavailable, "%s refused this collector's credentials (%s: %s): kept in the queue and retried until they are fixed",
			cc.Target(), s.Code(), s.Message())
	}
	return err
}
