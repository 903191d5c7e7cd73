package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Machine describes where figures were taken.
type Machine struct {
	CPUs  int
	Model string
	Go    string
	Load  string // load averages (1, 5, 15 min) when the run began
}

// ReadMachine reads the machine description (Linux /proc where available).
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, Load: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// loadAverage is the 1, 5 and 15 minute load averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Quantile returns the q-quantile (nearest rank) of samples.
func Quantile(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// fmtDur prints a duration with three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}

// Print writes the report as a Markdown table.
func (r *Report) Print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "mustard-sidecar bench, %s\n", r.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s; load average %s at start, %s at end\n", m.CPUs, m.Model, m.Go, m.Load, r.LoadAfter)
	if r.SidecarEnv != "" {
		fmt.Fprintf(w, "sidecar environment: %s\n", r.SidecarEnv)
	}
	if r.PeerSkipped != "" {
		fmt.Fprintf(w, "peer column skipped: %s\n", r.PeerSkipped)
	} else {
		fmt.Fprintf(w, "peer: %s\n", r.PeerInfo)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| metric | n | median | p90 | peer n | peer median | peer p90 | ours/peer (medians) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, x := range r.Rows {
		if len(x.Ours) == 0 {
			continue
		}
		om, op := Quantile(x.Ours, 0.5), Quantile(x.Ours, 0.9)
		pn, pm, pp, ratio := "", "", "", ""
		if len(x.Peer) > 0 {
			m := Quantile(x.Peer, 0.5)
			pn, pm, pp = fmt.Sprint(len(x.Peer)), fmtDur(m), fmtDur(Quantile(x.Peer, 0.9))
			if m > 0 {
				ratio = fmt.Sprintf("%.2f×", float64(om)/float64(m))
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", x.Name, len(x.Ours), fmtDur(om), fmtDur(op), pn, pm, pp, ratio)
	}
	if first, last := r.find(largeFirstRow), r.find(largeLastRow); first != nil && last != nil {
		growth := func(a, b []time.Duration) string {
			if len(a) == 0 || len(b) == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f×", float64(Quantile(b, 0.5))/float64(Quantile(a, 0.5)))
		}
		fmt.Fprintf(w, "\n40 × 50 KB answers, median round trip of the last 5 over the first 5: ours %s, peer %s\n",
			growth(first.Ours, last.Ours), growth(first.Peer, last.Peer))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "%s\n", n.Text)
	}
	var summary []string
	for _, grp := range []struct{ group, label string }{{"", "bench/workloads"}, {GalleryGroup, "reference gallery"}} {
		for _, v := range []struct {
			label  string
			prefix string
		}{{"compile+start+resumes", workloadKey}, {"program cached, start+resumes", workloadCachedKey},
			{"program cached, delta delivery", workloadDeltaKey}, {"program cached, batch calls", workloadBatchKey}} {
			if g, ok := r.summary(grp.group, v.prefix); ok {
				summary = append(summary, fmt.Sprintf("%s end to end (%s), ours/peer over %d programs: geomean %.2f×, min %.2f× (%s), max %.2f× (%s)",
					grp.label, v.label, len(g.Ratios), g.Geomean, g.Min.Ratio, g.Min.Name, g.Max.Ratio, g.Max.Name))
			}
		}
	}
	if len(summary) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(summary, "\n"))
	}
	r.printCrossings(w)
}

// printCrossings writes the round trips each workload takes in one mode
// and in batch mode, with the cached end-to-end medians of both modes
// against the peer's cached run, and the geomeans of those ratios over
// each group.
func (r *Report) printCrossings(w io.Writer) {
	if len(r.Crossings) == 0 {
		return
	}
	fmt.Fprintln(w)
	if r.NoBatch != "" {
		fmt.Fprintf(w, "batch mode not measured: %s\n", r.NoBatch)
	}
	fmt.Fprintln(w, "| program | calls | round trips, one | round trips, batch | one, cached | batch, cached | peer, cached | one/peer | batch/peer |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	median := func(key string) time.Duration {
		for _, x := range r.Rows {
			if x.PeerKey == key && len(x.Ours) > 0 {
				return Quantile(x.Ours, 0.5)
			}
		}
		return 0
	}
	peer := func(name string) time.Duration {
		for _, x := range r.Rows {
			if x.PeerKey == workloadCachedKey+name && len(x.Peer) > 0 {
				return Quantile(x.Peer, 0.5)
			}
		}
		return 0
	}
	ratio := func(a, b time.Duration) string {
		if a <= 0 || b <= 0 {
			return ""
		}
		return fmt.Sprintf("%.2f×", float64(a)/float64(b))
	}
	type acc struct {
		one, batch float64
		n, nb      int
	}
	groups := map[string]*acc{}
	var order []string
	for _, x := range r.Crossings {
		one, batch, pm := median(workloadCachedKey+x.Name), median(workloadBatchKey+x.Name), peer(x.Name)
		bt := ""
		if x.Batch > 0 {
			bt = fmt.Sprint(x.Batch)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", x.Name, x.Calls, x.One, bt,
			fmtDur(one), fmtDur(batch), fmtDur(pm), ratio(one, pm), ratio(batch, pm))
		g := groups[x.Group]
		if g == nil {
			g = &acc{}
			groups[x.Group] = g
			order = append(order, x.Group)
		}
		if one > 0 && pm > 0 {
			g.one += math.Log(float64(one) / float64(pm))
			g.n++
		}
		if batch > 0 && pm > 0 {
			g.batch += math.Log(float64(batch) / float64(pm))
			g.nb++
		}
	}
	for _, name := range order {
		g := groups[name]
		label := "bench/workloads"
		if name == GalleryGroup {
			label = "reference gallery"
		}
		var parts []string
		if g.n > 0 {
			parts = append(parts, fmt.Sprintf("one mode %.2f× over %d programs", math.Exp(g.one/float64(g.n)), g.n))
		}
		if g.nb > 0 {
			parts = append(parts, fmt.Sprintf("batch mode %.2f× over %d programs", math.Exp(g.batch/float64(g.nb)), g.nb))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s, program cached, ours/peer geomean: %s\n", label, strings.Join(parts, ", "))
		}
	}
}

// Peer keys of the workloads' end-to-end rows, followed by the workload's
// name.
const (
	workloadKey       = "workload/"
	workloadCachedKey = "workload_cached/"
	workloadDeltaKey  = "workload_delta/" // ours only: the peer's figure is its cached run
	workloadBatchKey  = "workload_batch/" // ours only (host_calls "batch"): the same
)

// WorkloadRatio is ours/peer for one workload: the ratio of the medians of
// its end-to-end row.
type WorkloadRatio struct {
	Name  string
	Ratio float64
}

// RatioSummary is ours/peer over the programs of one group that have
// samples on both sides.
type RatioSummary struct {
	Ratios   []WorkloadRatio // in row order
	Geomean  float64
	Min, Max WorkloadRatio
}

// Summary summarises the end-to-end rows of one group of workloads ("" for
// bench/workloads, GalleryGroup for the recorded gallery), with or without
// the program cached; false if none has samples on both sides.
func (r *Report) Summary(group string, cached bool) (RatioSummary, bool) {
	prefix := workloadKey
	if cached {
		prefix = workloadCachedKey
	}
	return r.summary(group, prefix)
}

// summary is Summary over the rows whose peer key has prefix.
func (r *Report) summary(group, prefix string) (RatioSummary, bool) {
	var g RatioSummary
	logSum := 0.0
	for _, x := range r.Rows {
		name, ok := strings.CutPrefix(x.PeerKey, prefix)
		if !ok || x.Group != group || len(x.Ours) == 0 || len(x.Peer) == 0 {
			continue
		}
		pm := Quantile(x.Peer, 0.5)
		if pm <= 0 {
			continue
		}
		wr := WorkloadRatio{name, float64(Quantile(x.Ours, 0.5)) / float64(pm)}
		if len(g.Ratios) == 0 || wr.Ratio < g.Min.Ratio {
			g.Min = wr
		}
		if len(g.Ratios) == 0 || wr.Ratio > g.Max.Ratio {
			g.Max = wr
		}
		g.Ratios = append(g.Ratios, wr)
		logSum += math.Log(wr.Ratio)
	}
	if len(g.Ratios) == 0 {
		return g, false
	}
	g.Geomean = math.Exp(logSum / float64(len(g.Ratios)))
	return g, true
}

func (r *Report) find(name string) *Row {
	for _, x := range r.Rows {
		if x.Name == name {
			return x
		}
	}
	return nil
}
