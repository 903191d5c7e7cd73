module github.com/mustard-sidecar/mustard-sidecar

go 1.26.8

require (
	github.com/evanw/esbuild v0.28.2
	github.com/fxamacker/cbor/v2 v2.10.0
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible
	github.com/klauspost/compress v1.20.4
	github.com/stretchr/testify v1.12.1
	golang.org/x/crypto v0.59.0
	golang.org/x/text v0.44.0
)

require (
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
