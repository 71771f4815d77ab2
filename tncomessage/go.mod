module github.com/progressotel/progressotel/tncomessage

go 1.26.8

require go.opentelemetry.io/otel v1.45.0

require github.com/cespare/xxhash/v2 v2.3.0 // indirect
