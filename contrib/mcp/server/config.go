// Package server is mustard-mcp: an MCP server whose tool run_code runs
// TypeScript or JavaScript in the mustard sidecar, with the tools of the
// upstream MCP servers it is configured with as namespaced functions.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mustardmcp "github.com/mustard-sidecar/mustard-sidecar/contrib/mcp"
)

// Config is the configuration file: the upstream MCP servers in the
// format desktop MCP clients use,
//
//	{"mcpServers": {"github": {"command": "...", "args": [...], "env": {...}},
//	                "docs": {"url": "https://...", "headers": {...}}}}
//
// where each name is the namespace of that server's tools.
type Config struct {
	MCPServers map[string]Upstream `json:"mcpServers"`
}

// Upstream is one MCP server: a command run with stdio, or the URL of a
// streamable HTTP endpoint.
type Upstream struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ReadConfig reads and checks a configuration file. Its errors do not
// name the file's path.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("the config file does not exist")
		}
		return nil, errors.New("the config file cannot be read")
	}
	return ParseConfig(b)
}

// ParseConfig parses and checks a configuration.
func ParseConfig(b []byte) (*Config, error) {
	var c Config
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("the config is not JSON of the form {\"mcpServers\": {...}}: %s", jsonError(err))
	}
	if c.MCPServers == nil {
		return nil, errors.New("the config has no \"mcpServers\" object")
	}
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		u := c.MCPServers[name]
		switch {
		case !mustardmcp.IsNamespace(name):
			return nil, fmt.Errorf("server name %q: it is the namespace of its tools, so it must be a JavaScript identifier (letters, digits, _ and $, not a reserved word or a global)", name)
		case u.Command != "" && u.URL != "":
			return nil, fmt.Errorf("server %q: give \"command\" or \"url\", not both", name)
		case u.Command == "" && u.URL == "":
			return nil, fmt.Errorf("server %q: give \"command\" (stdio) or \"url\" (streamable HTTP)", name)
		case u.URL == "" && len(u.Headers) > 0:
			return nil, fmt.Errorf("server %q: \"headers\" go with \"url\"", name)
		case u.Command == "" && (len(u.Args) > 0 || len(u.Env) > 0):
			return nil, fmt.Errorf("server %q: \"args\" and \"env\" go with \"command\"", name)
		}
	}
	return &c, nil
}

// transport is how to reach the upstream server.
func (u Upstream) transport() mcp.Transport {
	if u.URL != "" {
		client := &http.Client{}
		if len(u.Headers) > 0 {
			client.Transport = headerTransport{headers: u.Headers, base: http.DefaultTransport}
		}
		return &mcp.StreamableClientTransport{Endpoint: u.URL, HTTPClient: client}
	}
	cmd := exec.Command(u.Command, u.Args...)
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(u.Env)) {
		cmd.Env = append(cmd.Env, k+"="+u.Env[k])
	}
	cmd.Stderr = os.Stderr
	return &mcp.CommandTransport{Command: cmd}
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// connect connects to every upstream server and adds its tools to the
// bridge under its name.
func connect(ctx context.Context, c *Config, b *mustardmcp.Bridge, version string) ([]*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "mustard-mcp", Version: version},
		&mcp.ClientOptions{ToolListChangedHandler: b.ToolListChanged, Capabilities: &mcp.ClientCapabilities{}})
	var sessions []*mcp.ClientSession
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		cs, err := client.Connect(ctx, c.MCPServers[name].transport(), nil)
		if err == nil {
			err = b.Add(ctx, name, cs)
		}
		if err != nil {
			for _, s := range sessions {
				s.Close()
			}
			if cs != nil {
				cs.Close()
			}
			return nil, fmt.Errorf("upstream server %q: %v", name, err)
		}
		sessions = append(sessions, cs)
	}
	return sessions, nil
}

// jsonError describes a JSON decoding error without Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("%s cannot be a JSON %s", te.Field, te.Value)
		}
		return fmt.Sprintf("the value cannot be a JSON %s", te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	return "invalid JSON"
}
