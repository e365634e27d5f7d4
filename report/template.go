package report

import (
	"html/template"
	"strings"
)

// page is the report. html/template escapes every value for its context;
// the only values not escaped are the src attributes (data: URIs) of
// the PNGs Render drew.
// No script, no external asset: the page is readable offline and printable.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="pairfed report">
<title>pairfed report: job {{.Job}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1000px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.time { white-space: nowrap; }
.scroll { overflow-x: auto; }
.badge { display: inline-block; padding: 0.1em 0.6em; border-radius: 0.3em; font-weight: bold; }
.good { background: #d8f0d8; color: #1b5e20; }
.bad { background: #f8d7d7; color: #8b1a1a; }
.pending { background: #fff1c7; color: #6b4f00; }
.notice { border-left: 4px solid #c99a00; background: #fffbea; padding: 0.6em 1em; }
.warn { border-left: 4px solid #b22; background: #fdf0f0; padding: 0.6em 1em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
footer { margin-top: 3em; color: #777; font-size: 0.9em; }
</style>
</head>
<body>
<h1>Job <span class="mono" id="job">{{.Job}}</span></h1>
<p><span class="badge {{.StatusClass}}" id="status">{{.Status}}</span>
{{if .Algo}} algorithm <code>{{.Algo}}</code>{{if .LocalAlgo}} (local algorithm <code>{{.LocalAlgo}}</code>){{end}}{{end}}</p>
{{if .Incomplete}}<p class="notice" id="incomplete">{{.Incomplete}}</p>{{end}}
<table id="summary">
<tr><th>status</th><td>{{.Status}}</td></tr>
{{if .Reason}}<tr><th>reason</th><td id="reason">{{.Reason}}</td></tr>{{end}}
<tr><th>algorithm</th><td>{{if .Algo}}{{.Algo}}{{else}}—{{end}}</td></tr>
<tr><th>phases</th><td>{{.Phases}} completed{{if .PlannedPhases}} of {{.PlannedPhases}} announced{{end}}</td></tr>
<tr><th>sites (active at the end)</th><td id="sites">{{if .Sites}}{{join .Sites}}{{else}}none{{end}}</td></tr>
<tr><th>dropped during the job</th><td id="dropped">{{if .Dropped}}{{join .Dropped}}{{else}}none{{end}}</td></tr>
<tr><th>refused</th><td id="refused">{{if .Refused}}{{join .Refused}}{{else}}none{{end}}</td></tr>
<tr><th>test AUC</th><td id="test-auc">{{if .TestAUC}}{{.TestAUC}} (n_test = {{.NTest}}){{else}}not evaluated (the job has no final model, or the coordinator ran without --test){{end}}</td></tr>
<tr><th>privacy</th><td><span class="badge {{.VerdictClass}}" id="verdict">{{.Verdict}}</span>
<ul id="why">{{range .Why}}<li>{{.}}</li>{{end}}</ul></td></tr>
<tr><th>source</th><td class="mono">{{.Source}}</td></tr>
</table>
{{range .Notes}}<p class="notice">{{.}}</p>{{end}}

<h2 id="parameters">Parameters</h2>
{{if .Params}}<p>Exactly as the coordinator announced the job to its sites.</p>
<table>
<tr><th>parameter</th><th>value</th><th>meaning</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code></td><td class="mono">{{.Value}}</td><td>{{.Meaning}}</td></tr>
{{end}}</table>
{{else}}<p class="notice">The job was never announced to sites (it was refused or failed before it started): no parameters were recorded.</p>{{end}}

<h2 id="auc-per-phase">AUC per phase</h2>
{{if .PhaseRows}}<p>Test AUC of the coordinator's model after each aggregated phase, on the coordinator's <code>--test</code> file.</p>
<img {{.PhasePlot}} width="900" height="540" alt="test AUC after each phase of job {{.Job}}">
<table>
<tr><th>phase</th><th>test AUC</th></tr>
{{range .PhaseRows}}<tr><td class="num">{{.Phase}}</td><td class="num">{{.AUC}}</td></tr>
{{end}}</table>
{{else}}<p class="notice">No AUC per phase was recorded: the coordinator evaluates a job after each aggregated phase only when it runs with <code>--test</code>.</p>{{end}}

<h2 id="privacy">Privacy</h2>
<h3>What each site reported</h3>
{{if .PrivacyRows}}<table>
<tr><th>site</th><th>records</th><th>requested ε</th><th>requested δ</th><th>certified ε (charged)</th><th>certified δ (charged)</th><th>composed ε (exact Gaussian DP)</th><th>secure noise</th></tr>
{{range .PrivacyRows}}<tr><td>{{.Site}}</td><td class="num">{{.Records}}</td><td class="num">{{.Epsilon}}</td><td class="num">{{.Delta}}</td><td class="num">{{.CertEpsilon}}</td><td class="num">{{.CertDelta}}</td><td class="num">{{.Composed}}</td><td>{{.Secure}}</td></tr>
{{end}}</table>
{{if .SigmaHeader}}<p>Noise σ of each release (per phase, or per noisy step of a fed-oneshot site):</p>
<div class="scroll"><table id="sigmas">
<tr><th>site</th>{{range .SigmaHeader}}<th>σ<sub>{{.}}</sub></th>{{end}}</tr>
{{range .SigmaRows}}<tr><td>{{.Site}}</td>{{range .Sigmas}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
{{else}}<p>No site reported privacy for this job (it is not private or did not complete).</p>{{end}}

<h3>The coordinator's ledger</h3>
<p>Accountant rule: <span id="accountant">{{.AccountantRule}}</span>. Phase 0 is the reservation of the job's whole (ε, δ), charged before the job was announced; a site that refused or dropped out stays charged (the coordinator's ledger may over-count, never under-count; each site's own ledger is exact).</p>
{{if .ChargeRows}}<div class="scroll"><table id="charges">
<tr><th>site</th><th>phase</th><th>mechanism</th><th>σ</th><th>sensitivity</th><th>records</th><th>ε</th><th>δ</th><th>private</th><th>time (UTC)</th></tr>
{{range .ChargeRows}}<tr><td>{{.Site}}</td><td class="num">{{.Phase}}</td><td>{{.Mechanism}}</td><td class="num">{{.Sigma}}</td><td class="num">{{.Sensitivity}}</td><td class="num">{{.Records}}</td><td class="num">{{.Epsilon}}</td><td class="num">{{.Delta}}</td><td>{{.Private}}</td><td class="mono time">{{.Time}}</td></tr>
{{end}}</table></div>
{{else}}<p>The ledger holds no entry for this job.</p>{{end}}
{{if .LedgerRows}}<p>Each site's spending over all jobs of the ledger, against its budget at the coordinator (<code>pairfed ledger budget set</code>):</p>
<div class="scroll"><table id="spent">
<tr><th>site</th><th>ε of this job</th><th>ε spent</th><th>δ spent</th><th>ε budget</th><th>δ budget</th><th>ε remaining</th><th>δ remaining</th><th>jobs</th><th>non-private jobs</th></tr>
{{range .LedgerRows}}<tr><td>{{.Site}}</td><td class="num">{{.JobEpsilon}}</td><td class="num">{{.Spent}}</td><td class="num">{{.SpentDelta}}</td><td class="num">{{.Budget}}</td><td class="num">{{.BudgetDelta}}</td><td class="num">{{.Remaining}}</td><td class="num">{{.RemainingDelta}}</td><td class="num">{{.Jobs}}</td><td class="num">{{.NonPrivate}}</td></tr>
{{end}}</table></div>{{end}}
{{if .SpentPlot}}<img {{.SpentPlot}} width="900" height="540" alt="privacy spent per site over time">
<p>Each step is a job's first charge of the site (its ε counts once per site, composed as above); dashed lines are budgets; the dotted vertical line is this job.</p>{{end}}
{{if .SpentNote}}<p class="notice">{{.SpentNote}}</p>{{end}}

<h2 id="roc">ROC curve of the final model</h2>
{{with .ROC}}<img {{.Plot}} width="600" height="600" alt="ROC curve of the final model">
<table>
<tr><th>AUC of the ROC curve (trapezoids)</th><td class="mono" id="roc-auc">{{.AUC}}</td></tr>
<tr><th>AUC of the linear scorer (pairwise.LinearAUC)</th><td class="mono" id="linear-auc">{{.LinearAUC}}</td></tr>
{{if .StatusAUC}}<tr><th>AUC the coordinator recorded</th><td class="mono" id="status-auc">{{.StatusAUC}}</td></tr>{{end}}
<tr><th>test records</th><td>{{.N}} ({{.Positives}} positive, {{.Negatives}} negative), {{.Points}} curve points</td></tr>
<tr><th>test file</th><td class="mono">{{.TestFile}}</td></tr>
<tr><th>scaling</th><td><code>--scale {{.Scale}}</code> fitted on the test file, then clipped to the job's feature radius (as the coordinator does)</td></tr>
</table>
{{if .Mismatch}}<p class="warn" id="roc-mismatch">{{.Mismatch}}</p>{{end}}
{{else}}<p class="notice" id="no-roc">{{.NoROC}}</p>{{end}}
{{if .Model}}<h3>Final model</h3>
<div class="scroll"><table id="model">
<tr><th>j</th><th>w<sub>j</sub></th></tr>
{{range .Model}}<tr><td class="num">{{.Index}}</td><td class="mono">{{.Value}}</td></tr>
{{end}}</table></div>{{if .ModelMore}}<p>… and {{.ModelMore}} more coefficients (in the job's status file).</p>{{end}}{{end}}

<footer>Generated by <code>pairfed report</code> at {{.Generated}}.</footer>
</body>
</html>
`
