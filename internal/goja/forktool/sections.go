package main

import (
	"fmt"
	"regexp"
	"strings"
)

// section is one `## ` section of PATCHES.md: one patch of the series.
type section struct {
	title    string
	slug     string
	newFiles []string // files (or directories, ending in /) the patch adds whole
}

var (
	slugRe     = regexp.MustCompile("^[a-z0-9]+(-[a-z0-9]+)*$")
	backtickRe = regexp.MustCompile("`([^`]+)`")
)

// parseSections reads the series from PATCHES.md: every `## ` section
// names its patch in a paragraph starting "Patch: `slug`", followed by the
// new files it adds whole, in backticks.
func parseSections(md string) ([]section, error) {
	var secs []section
	var errs []string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			secs = append(secs, section{title: strings.TrimPrefix(l, "## ")})
			continue
		}
		if !strings.HasPrefix(l, "Patch: ") || len(secs) == 0 {
			continue
		}
		para := l
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" && !strings.HasPrefix(lines[i+1], "#") {
			i++
			para += " " + lines[i]
		}
		s := &secs[len(secs)-1]
		if s.slug != "" {
			errs = append(errs, fmt.Sprintf("section %q: two Patch: lines", s.title))
			continue
		}
		ms := backtickRe.FindAllStringSubmatch(para, -1)
		if len(ms) == 0 || !slugRe.MatchString(ms[0][1]) {
			errs = append(errs, fmt.Sprintf("section %q: Patch: line without a slug (lower-case words joined by -)", s.title))
			continue
		}
		s.slug = ms[0][1]
		for _, m := range ms[1:] {
			s.newFiles = append(s.newFiles, m[1])
		}
	}
	seen := map[string]string{}
	for _, s := range secs {
		if s.slug == "" {
			errs = append(errs, fmt.Sprintf("section %q has no \"Patch: `slug`\" line", s.title))
			continue
		}
		if t, ok := seen[s.slug]; ok {
			errs = append(errs, fmt.Sprintf("slug %q names two sections: %q and %q", s.slug, t, s.title))
		}
		seen[s.slug] = s.title
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("PATCHES.md:\n  %s", strings.Join(errs, "\n  "))
	}
	if len(secs) == 0 {
		return nil, fmt.Errorf("PATCHES.md: no sections")
	}
	return secs, nil
}

// patchName is the file name of the series' i-th patch (from 0).
func patchName(i int, s section) string {
	return fmt.Sprintf("%04d-%s.patch", i+1, s.slug)
}
