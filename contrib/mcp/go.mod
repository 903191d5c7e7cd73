module github.com/mustard-sidecar/mustard-sidecar/contrib/mcp

go 1.26.8

require (
	github.com/evanw/esbuild v0.28.2
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/mustard-sidecar/mustard-sidecar v0.0.0-00010101000000-000000000000
)

require (
	github.com/fxamacker/cbor/v2 v2.10.0 // indirect
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/crypto v0.59.0 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/mustard-sidecar/mustard-sidecar => ../..
