package main

import (
	"fmt"
	"os"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/node"
	"github.com/pairfed/pairfed/protocol"
)

// This file holds the flags of a site's records: the worker's --scale,
// a job's --feature-bounds, and the privacy words of `job submit`. How a
// site prepares its records for each job is package node's (node.Worker).

// siteScale resolves a site's --scale: "bounds" with a schema unless set,
// "" (no choice: private jobs need the job's schema) without either.
func siteScale(who string, scale string, set bool, schema *data.Schema) (string, error) {
	if !set {
		if schema != nil {
			return "bounds", nil
		}
		return "", nil
	}
	if (scale == "bounds") != (schema != nil) {
		return "", usageError{fmt.Errorf("%s: --scale bounds goes with --feature-bounds FILE (got --scale %s%s)", who, scale, map[bool]string{true: " and a schema", false: " without a schema"}[schema != nil])}
	}
	switch scale {
	case "bounds", "none", "minmax", "standard":
		return scale, nil
	}
	return "", usageError{fmt.Errorf("%s: unknown scaling %q (want bounds, none, minmax or standard)", who, scale)}
}

// readJobSchema reads --feature-bounds for a job submission: the file's
// text (what every site parses), validated as the sites will.
func readJobSchema(path string) (string, *data.Schema, error) {
	s, err := data.LoadSchema(path)
	if err != nil {
		return "", nil, err
	}
	if u := s.Unknown(); len(u) > 0 {
		return "", nil, usageError{fmt.Errorf("%s has %d features marked unknown (e.g. feature %d): a federated job needs public bounds for every feature", path, len(u), u[0]+1)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	if len(b) > protocol.MaxSchemaBytes {
		return "", nil, usageError{fmt.Errorf("%s is %d bytes, over the %d a job may carry: drop the free-text fields (description, source)", path, len(b), protocol.MaxSchemaBytes)}
	}
	return string(b), s, nil
}

// schemaDiff names the first differences between two schemas in what
// decides a site's records (node.SchemaDiff).
func schemaDiff(site, job *data.Schema) string { return node.SchemaDiff(site, job) }

// privacyLine says in words whether a site's releases in a job were
// private, and if not why (the site's report only says whether its noise
// and preparation were private; the site's log names the opt-in).
func privacyLine(p protocol.SiteReport) string {
	if p.Secure {
		return "private: yes (secure noise, public preprocessing)"
	}
	return "NOT private: the site reported its releases not private (an explicit opt-in there — seeded noise, --scale minmax|standard fitted on its records, or data-dependent loading; its log names it)"
}

// jobPrivacyStatus says whether a job's result is private, in words: the
// job-level line of `job submit` (privacy_status in its JSON), as the
// coordinator's dashboard says it.
func jobPrivacyStatus(st *protocol.JobStatus) string { return coordinator.PrivacyStatus(st) }

// budgetText prints one half of a recorded budget (node.BudgetText).
func budgetText(v float64) string { return node.BudgetText(v) }
