package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A dotted capability name (`github.create_issue`) is a function held by a
// namespace object (`github`): frozen, with a null prototype, reachable
// from a global of the first segment's name. The console is the namespace
// console, holding its methods.

// namespaces collects a realm's namespace objects while its capabilities
// are installed; install then freezes them and defines their globals.
type namespaces struct {
	r     *realm
	roots map[string]*goja.Object // by global name
	all   []*goja.Object          // every namespace object, to freeze
	order []string                // the roots' names, in the order first seen
}

func newNamespaces(r *realm) *namespaces {
	return &namespaces{r: r, roots: map[string]*goja.Object{}}
}

// add places fn at the dotted path name (two or more segments).
func (ns *namespaces) add(name string, fn *goja.Object) {
	segs := strings.Split(name, ".")
	obj, ok := ns.roots[segs[0]]
	if !ok {
		obj = ns.object()
		ns.roots[segs[0]] = obj
		ns.order = append(ns.order, segs[0])
	}
	for _, seg := range segs[1 : len(segs)-1] {
		next, ok := obj.Get(seg).(*goja.Object)
		if !ok {
			next = ns.object()
			_ = obj.DefineDataProperty(seg, next, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		}
		obj = next
	}
	_ = obj.DefineDataProperty(segs[len(segs)-1], fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// object makes an empty namespace object with a null prototype.
func (ns *namespaces) object() *goja.Object {
	o := ns.r.rt.NewObject()
	_ = o.SetPrototype(nil)
	ns.all = append(ns.all, o)
	return o
}

// install freezes every namespace object (its members are already
// non-writable and non-configurable) and defines each root as a global
// that cannot be reassigned, deleted or redefined, as a capability is.
func (ns *namespaces) install(global *goja.Object) error {
	for _, o := range ns.all {
		o.MustardPreventExtensions()
	}
	for _, name := range ns.order {
		if global.Get(name) != nil {
			return &Error{Kind: KindValidation, Message: fmt.Sprintf("global name %q is already defined", name)}
		}
		_ = global.DefineDataProperty(name, ns.roots[name], goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}
	return nil
}

// lastSegment is a dotted name's function name.
func lastSegment(name string) string {
	return name[strings.LastIndexByte(name, '.')+1:]
}

// builtinGlobals are the global names every realm has before a guest's
// capabilities and inputs are defined.
var builtinGlobals = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	r, err := buildRealm()
	if err != nil {
		return names
	}
	for _, n := range r.rt.GlobalObject().GetOwnPropertyNames() {
		names[n] = true
	}
	return names
})

// CheckCapabilities checks a start's capabilities against the realm they
// will be defined in: a namespace (the first segment of a dotted name)
// must not be a built-in global or an input, and console may hold only
// the console methods (policy.ValidateCapabilityName checked each name's
// form). A plain name that collides fails when the realm is built, as it
// always has.
func CheckCapabilities(capabilities []string, inputs []value.Member) error {
	for _, name := range capabilities {
		root, _, dotted := strings.Cut(name, ".")
		if !dotted {
			continue
		}
		if builtinGlobals()[root] {
			return fmt.Errorf("invalid capability name %q: %s is a built-in global", name, root)
		}
		if slices.ContainsFunc(inputs, func(m value.Member) bool { return m.Key == root }) {
			return fmt.Errorf("invalid capability name %q: %s is an input", name, root)
		}
	}
	return nil
}

// isConsoleCapability reports whether a capability is one of the console
// methods, whose calls the guest sees return undefined whatever value the
// host answers; an error answer throws, as any capability's does (both as
// in the reference).
func isConsoleCapability(name string) bool {
	m, ok := strings.CutPrefix(name, "console.")
	return ok && slices.Contains(policy.ConsoleMethods, m)
}
