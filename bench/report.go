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
			{"program cached, delta delivery", workloadDeltaKey}} {
			if g, ok := r.summary(grp.group, v.prefix); ok {
				summary = append(summary, fmt.Sprintf("%s end to end (%s), ours/peer over %d programs: geomean %.2f×, min %.2f× (%s), max %.2f× (%s)",
					grp.label, v.label, len(g.Ratios), g.Geomean, g.Min.Ratio, g.Min.Name, g.Max.Ratio, g.Max.Name))
			}
		}
	}
	if len(summary) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(summary, "\n"))
	}
}

// Peer keys of the workloads' end-to-end rows, followed by the workload's
// name.
const (
	workloadKey       = "workload/"
	workloadCachedKey = "workload_cached/"
	workloadDeltaKey  = "workload_delta/" // ours only: the peer's figure is its cached run
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
