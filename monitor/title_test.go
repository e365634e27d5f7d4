package monitor

import (
	"regexp"
	"testing"
)

// TestDashboardTitleNotDoubled: the header is one element the script fills;
// a literal "pairfed" before the federation name (itself "pairfed" by
// default) printed "pairfed pairfed" (issue 16 item 6).
func TestDashboardTitleNotDoubled(t *testing.T) {
	dashboard, err := assets.ReadFile("dashboard.html")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`pairfed\s*<span id="federation"`).Match(dashboard) {
		t.Error(`dashboard header prints "pairfed" before the federation name`)
	}
	if !regexp.MustCompile(`s\.federation === "pairfed"`).Match(dashboard) {
		t.Error(`dashboard script does not special-case the default federation name "pairfed"`)
	}
}
