module github.com/chainintel/chainintel/sim

go 1.26.0

require (
	github.com/chainintel/chainintel/libs v0.0.0
	github.com/chainintel/chainintel/proto v0.0.0
	github.com/holiman/uint256 v1.3.2
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/btcsuite/btcd/btcutil v1.2.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mr-tron/base58 v1.3.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/segmentio/kafka-go v0.4.51 // indirect
	github.com/twmb/franz-go v1.22.2 // indirect
	github.com/twmb/franz-go/pkg/kfake v0.0.0-20260918054303-01f206a7e32c // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace (
	github.com/chainintel/chainintel/libs => ../libs
	github.com/chainintel/chainintel/proto => ../proto
)
