package admissionextension

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// A real gRPC server that refuses with code: what a client with the
// middleware's dial options gets back.
func callRefusing(t *testing.T, code codes.Code) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
		if code == codes.OK {
			return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
		}
		return nil, status.Error(code, "refused here")
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(typ), &Config{MaxInFlightBytes: 1, MaxRequestBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := ext.(extensionmiddleware.GRPCClient).GetGRPCClientOptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(l.Addr().String(), append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	_, err = healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
	return err
}

// The next tier's refusal of the credentials is retryable; every other
// answer passes unchanged.
func TestRefusedCredentialsAreRetryable(t *testing.T) {
	for _, code := range []codes.Code{codes.Unauthenticated, codes.PermissionDenied} {
		err := callRefusing(t, code)
		if s, _ := status.FromError(err); s.Code() != codes.Unavailable || !strings.Contains(s.Message(), code.String()+": refused here") {
			t.Errorf("%v refusal: got %v, want Unavailable naming the refusal", code, err)
		}
	}
	for _, code := range []codes.Code{codes.InvalidArgument, codes.ResourceExhausted, codes.Unavailable} {
		if s, _ := status.FromError(callRefusing(t, code)); s.Code() != code || s.Message() != "refused here" {
			t.Errorf("%v: got %v, want it unchanged", code, s)
		}
	}
	if err := callRefusing(t, codes.OK); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("served call: %v", err)
	}
}
