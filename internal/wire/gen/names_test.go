package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The Node package's copy of the names is what the generator writes now.
func TestNodeCopyIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "..", "clients", "node", "test", "fixtures", "wire-names.json")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, names()) {
		t.Fatalf("%s is stale: run go generate ./internal/wire", path)
	}
}
