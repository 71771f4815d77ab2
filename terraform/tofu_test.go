package terraform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// dbPassword is the lifecycle configuration's sensitive variable: passed
// through Command.SensitiveVars, used as a resource input and inside a
// sensitive output.
const dbPassword = "pg-Sup3r-s3cret-4711"

// These tests run the real OpenTofu CLI on the configurations of
// testdata/configs, which use only terraform_data and local-exec: no
// provider download, no network. They assert event types, counts, the
// span tree and the N-of-M progress; never ids or times.

func TestLifecycleWithRealTofu(t *testing.T) {
	bin := tofu(t)
	dir := workdir(t, "lifecycle")
	env := offline(t)
	cmd := func(args ...string) Command {
		return Command{Binary: bin, Dir: dir, Args: args, Env: env,
			SensitiveVars: map[string]any{"db_password": dbPassword}}
	}

	t.Run("create", func(t *testing.T) {
		c := newCapture(t)
		ctx, parent := c.parent(context.Background())
		command := cmd("apply")
		command.Init = true
		res, err := Run(ctx, command, c.opts(recordTo(t, "tofu-apply-create.jsonl"))...)
		parent.End()
		checkRun(t, c, res)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !res.OK() || res.Tool != "tofu" || res.Version == "" || res.ExitCode != 0 {
			t.Fatalf("result: %+v", res)
		}
		if res.Plan == nil || res.Plan.Add != 6 || res.Applied == nil || res.Applied.Add != 6 {
			t.Fatalf("summaries: plan %+v applied %+v", res.Plan, res.Applied)
		}
		if res.Total != 6 || res.Completed != 6 || res.Errored != 0 {
			t.Fatalf("N of M: %d+%d of %d", res.Completed, res.Errored, res.Total)
		}

		evs := c.sink.Events()
		assertFraming(t, evs, progress.TypeOperationCompleted)
		wantCounts(t, c.sink, map[string]int{
			TypeVersion:            2, // init's and apply's
			TypePlannedChange:      6,
			TypeChangeSummary:      2,
			TypeOutputs:            2,
			TypeApplyStarted:       6,
			TypeApplyCompleted:     6,
			TypeApplyErrored:       0,
			TypeProvisionStarted:   5,
			TypeProvisionOutput:    14, // per run: "Executing: …", then the echoed lines
			TypeProvisionCompleted: 5,
			TypeDiagnostic:         0,
		})
		wantProgress(t, c.sink, [][2]int64{{0, 6}, {1, 6}, {2, 6}, {3, 6}, {4, 6}, {5, 6}, {6, 6}})

		// Dependencies: the network before any web server, every web
		// server before the app.
		at := indexer(evs)
		for i := range 3 {
			web := fmt.Sprintf("terraform_data.web[%d]", i)
			if at(TypeApplyCompleted, "terraform_data.network") > at(TypeApplyStarted, web) {
				t.Errorf("%s started before the network was complete", web)
			}
			if at(TypeApplyCompleted, web) > at(TypeApplyStarted, "terraform_data.app") {
				t.Errorf("the app started before %s was complete", web)
			}
			up := slices.IndexFunc(evs, func(e progresstest.Event) bool {
				return e.EventName == TypeProvisionOutput && e.Details["output"] == fmt.Sprintf("web-%d up", i)
			})
			if up < at(TypeApplyStarted, web) || up > at(TypeApplyCompleted, web) {
				t.Errorf("%s's provisioner output is not inside its operation", web)
			}
		}
		web0 := c.sink.OfType(TypeApplyCompleted)[slices.IndexFunc(c.sink.OfType(TypeApplyCompleted),
			func(e progresstest.Event) bool { return e.Details["address"] == "terraform_data.web[0]" })]
		for _, k := range []string{"address", "resourceType", "resourceKey", "action", "idKey", "idValue", "elapsedSeconds"} {
			if _, ok := web0.Details[k]; !ok {
				t.Errorf("ApplyCompleted lacks %q: %v", k, web0.Details)
			}
		}
		if web0.Details["resourceKey"] != int64(0) || web0.Details["action"] != "create" || web0.Details["idKey"] != "id" {
			t.Errorf("ApplyCompleted details: %v", web0.Details)
		}

		// The span tree: driver → tofu apply → tofu init, and one span per
		// resource operation, with the provisioners' spans under them.
		cmdSpan := only(t, c.spansNamed("tofu apply"))
		if cmdSpan.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Error("the command span is not a child of the driver's span")
		}
		if only(t, c.spansNamed("tofu init")).Parent().SpanID() != cmdSpan.SpanContext().SpanID() {
			t.Error("the init span is not a child of the command span")
		}
		assertResourceSpans(t, c, cmdSpan, "create", []string{"terraform_data.network", "terraform_data.web[0]",
			"terraform_data.web[1]", "terraform_data.web[2]", "terraform_data.database", "terraform_data.app"})
		provs := c.spansNamed("provision local-exec")
		if len(provs) != 5 {
			t.Fatalf("%d provisioner spans, want 5", len(provs))
		}
		for _, p := range provs {
			op := c.spanByID(p.Parent().SpanID())
			if op == nil || attr(op, "terraform.resource.address") != attr(p, "terraform.resource.address") {
				t.Errorf("provisioner span of %s is not under its resource's span", attr(p, "terraform.resource.address"))
			}
		}
		for _, e := range c.sink.OfType(TypeProvisionOutput) {
			if s := c.spanByID(e.SpanID); s == nil || s.Name() != "provision local-exec" {
				t.Errorf("ProvisionOutput %q is not in a provisioner span", e.Details["output"])
			}
		}

		// Outputs: values of the plain ones, never of the sensitive one.
		if ids, _ := res.Outputs["web_ids"].Value.([]any); len(ids) != 3 {
			t.Errorf("web_ids = %#v", res.Outputs["web_ids"])
		}
		if o := res.Outputs["connection_string"]; !o.Sensitive || o.Value != nil {
			t.Errorf("connection_string = %#v", o)
		}
		assertNoSecret(t, c, res, err, dbPassword)
	})

	t.Run("replace", func(t *testing.T) {
		c := newCapture(t)
		command := cmd("apply")
		command.Vars = map[string]any{"generation": "2"}
		res, err := Run(context.Background(), command, c.opts(recordTo(t, "tofu-apply-replace.jsonl"))...)
		checkRun(t, c, res)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		// Three replacements (a delete and a create each) and the app's
		// update: 7 operations.
		if res.Plan == nil || res.Plan.Add != 3 || res.Plan.Remove != 3 || res.Plan.Change != 1 || res.Total != 7 {
			t.Fatalf("plan %+v, total %d", res.Plan, res.Total)
		}
		assertFraming(t, c.sink.Events(), progress.TypeOperationCompleted)
		if got := actions(c.sink.OfType(TypePlannedChange)); !slices.Equal(got, []string{"replace", "replace", "replace", "update"}) {
			t.Errorf("planned actions %v", got)
		}
		if got := actions(c.sink.OfType(TypeApplyCompleted)); !slices.Equal(got, []string{"create", "create", "create", "delete", "delete", "delete", "update"}) {
			t.Errorf("applied actions %v", got)
		}
		wantProgress(t, c.sink, [][2]int64{{0, 7}, {1, 7}, {2, 7}, {3, 7}, {4, 7}, {5, 7}, {6, 7}, {7, 7}})
		cmdSpan := only(t, c.spansNamed("tofu apply"))
		assertResourceSpans(t, c, cmdSpan, "delete", []string{"terraform_data.web[0]", "terraform_data.web[1]", "terraform_data.web[2]"})
		assertResourceSpans(t, c, cmdSpan, "create", []string{"terraform_data.web[0]", "terraform_data.web[1]", "terraform_data.web[2]"})
		assertResourceSpans(t, c, cmdSpan, "update", []string{"terraform_data.app"})
		// The refresh of the six existing resources, one span each.
		if n := len(c.sink.OfType(TypeRefreshCompleted)); n != 6 {
			t.Errorf("%d RefreshCompleted, want 6", n)
		}
		assertNoSecret(t, c, res, err, dbPassword)
	})

	t.Run("plan", func(t *testing.T) {
		c := newCapture(t)
		// -detailed-exitcode: status 2 means "changes present", a success.
		command := cmd("plan", "-detailed-exitcode")
		command.Vars = map[string]any{"generation": "3"}
		res, err := Run(context.Background(), command, c.opts(recordTo(t, "tofu-plan.jsonl"))...)
		checkRun(t, c, res)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.ExitCode != 2 || !res.OK() {
			t.Errorf("exit code %d, OK %v", res.ExitCode, res.OK())
		}
		if res.Plan == nil || res.Applied != nil || res.Total != 7 || res.Completed != 0 {
			t.Fatalf("plan %+v applied %+v total %d completed %d", res.Plan, res.Applied, res.Total, res.Completed)
		}
		wantCounts(t, c.sink, map[string]int{TypeApplyStarted: 0, TypePlannedChange: 4, TypeRefreshStarted: 6, TypeChangeSummary: 1})
		// A plan's progress is what it planned: all of it, at its end.
		wantProgress(t, c.sink, [][2]int64{{0, 7}, {7, 7}})
		cmdSpan := only(t, c.spansNamed("tofu plan"))
		for _, s := range c.spans.Ended() {
			if strings.HasPrefix(s.Name(), "refresh ") && s.Parent().SpanID() != cmdSpan.SpanContext().SpanID() {
				t.Errorf("%s is not under the command span", s.Name())
			}
		}
		assertNoSecret(t, c, res, err, dbPassword)
	})

	t.Run("destroy", func(t *testing.T) {
		c := newCapture(t)
		res, err := Run(context.Background(), cmd("destroy"), c.opts(recordTo(t, "tofu-destroy.jsonl"))...)
		checkRun(t, c, res)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.Applied == nil || res.Applied.Operation != "destroy" || res.Applied.Remove != 6 {
			t.Fatalf("applied %+v", res.Applied)
		}
		if got := actions(c.sink.OfType(TypeApplyCompleted)); !slices.Equal(got, slices.Repeat([]string{"delete"}, 6)) {
			t.Errorf("destroy actions %v", got)
		}
		wantProgress(t, c.sink, [][2]int64{{0, 6}, {1, 6}, {2, 6}, {3, 6}, {4, 6}, {5, 6}, {6, 6}})
		assertFraming(t, c.sink.Events(), progress.TypeOperationCompleted)
		assertNoSecret(t, c, res, err, dbPassword)
	})
}

func TestFailingApplyWithRealTofu(t *testing.T) {
	bin := tofu(t)
	dir := workdir(t, "failing")
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: bin, Dir: dir, Args: []string{"apply"}, Init: true, Env: offline(t)},
		c.opts(recordTo(t, "tofu-apply-failing.jsonl"))...)
	checkRun(t, c, res)

	var opErr *OperationError
	if !errors.As(err, &opErr) {
		t.Fatalf("error %v (%T), want an *OperationError", err, err)
	}
	if opErr.ExitCode != 1 || res.ExitCode != 1 || res.OK() {
		t.Errorf("exit code %d / %d, OK %v", opErr.ExitCode, res.ExitCode, res.OK())
	}
	if len(opErr.Diagnostics) != 2 {
		t.Fatalf("diagnostics %+v", opErr.Diagnostics)
	}
	for _, addr := range []string{"terraform_data.broken", "terraform_data.leaky"} {
		if !strings.Contains(err.Error(), "local-exec provisioner error ("+addr+")") {
			t.Errorf("the error does not name %s's diagnostic: %v", addr, err)
		}
	}
	if res.Total != 4 || res.Completed != 2 || res.Errored != 2 {
		t.Errorf("N of M: %d+%d of %d", res.Completed, res.Errored, res.Total)
	}
	slices.Sort(res.ErroredResources)
	if !slices.Equal(res.ErroredResources, []string{"terraform_data.broken", "terraform_data.leaky"}) {
		t.Errorf("errored %v", res.ErroredResources)
	}

	evs := c.sink.Events()
	assertFraming(t, evs, progress.TypeOperationFailed)
	failed := evs[len(evs)-1]
	if failed.Details["failureCode"] != progress.FailureInfrastructure || failed.Severity != log.SeverityError {
		t.Errorf("OperationFailed %v", failed.Details)
	}
	if ds, _ := failed.Details["diagnostics"].([]any); len(ds) != 2 {
		t.Errorf("OperationFailed diagnostics %v", failed.Details["diagnostics"])
	}
	if d, _ := failed.Details["description"].(string); !strings.Contains(d, "local-exec provisioner error") {
		t.Errorf("OperationFailed description %q", d)
	}
	wantCounts(t, c.sink, map[string]int{TypeApplyErrored: 2, TypeProvisionErrored: 2, TypeApplyCompleted: 2, TypeDiagnostic: 2})
	for _, e := range c.sink.OfType(TypeApplyErrored) {
		if e.Severity != log.SeverityError {
			t.Errorf("ApplyErrored at severity %v", e.Severity)
		}
	}
	// N counts what completed: the errored operations are not done.
	wantProgressEnd(t, c.sink, [2]int64{2, 4})

	// The tool's diagnostic of the broken resource keeps its detail; the
	// leaky one's quotes the sensitive value and is withheld.
	for _, d := range res.Diagnostics {
		switch d.Address {
		case "terraform_data.broken":
			if !strings.Contains(d.Detail, "exit status 3") || d.Range == nil || d.Range.Filename != "main.tf" {
				t.Errorf("broken's diagnostic %+v", d)
			}
		case "terraform_data.leaky":
			if d.Detail != withheldDetail {
				t.Errorf("leaky's detail %q, want it withheld", d.Detail)
			}
		}
	}

	// Spans: the errored operations say why.
	for _, addr := range []string{"terraform_data.broken", "terraform_data.leaky"} {
		s := only(t, c.spansNamed("create "+addr))
		if s.Status().Code != codes.Error || s.Status().Description != "local-exec provisioner error" {
			t.Errorf("%s span status %+v", addr, s.Status())
		}
		if !slices.ContainsFunc(s.Events(), func(e sdktrace.Event) bool { return e.Name == "terraform.diagnostic" }) {
			t.Errorf("%s span has no diagnostic event", addr)
		}
	}
	if s := only(t, c.spansNamed("tofu apply")); s.Status().Code != codes.Error {
		t.Errorf("command span status %+v", s.Status())
	}

	// Provisioner output goes through the redaction: the token's value and
	// every line of the private key are gone, the rest is kept.
	var lines []string
	for _, e := range c.sink.OfType(TypeProvisionOutput) {
		if e.Details["address"] == "terraform_data.printer" {
			lines = append(lines, e.Details["output"].(string))
		}
	}
	want := []string{wire.Redacted, "export API_TOKEN=" + wire.Redacted, wire.Redacted,
		wire.Redacted, wire.Redacted, wire.Redacted, "printed"}
	if !slices.Equal(lines, want) {
		t.Errorf("printer's output\n got %q\nwant %q", lines, want)
	}
	assertNoSecret(t, c, res, err, "s3cr3t-from-config-default", "tok-abc123xyz",
		"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7")
}

// assertFraming checks that evs start with OperationStarted and end with
// last, each once.
func assertFraming(t *testing.T, evs []progresstest.Event, last string) {
	t.Helper()
	if len(evs) < 2 || evs[0].EventName != progress.TypeOperationStarted || evs[len(evs)-1].EventName != last {
		t.Fatalf("events do not go from OperationStarted to %s: %v", last, names(evs))
	}
	for _, e := range evs[1 : len(evs)-1] {
		if strings.HasPrefix(e.EventName, "common/Operation") {
			t.Errorf("%s in the middle of the run", e.EventName)
		}
	}
}

func wantCounts(t *testing.T, sink *progresstest.Sink, want map[string]int) {
	t.Helper()
	for typ, n := range want {
		if got := len(sink.OfType(typ)); got != n {
			t.Errorf("%d %s, want %d", got, typ, n)
		}
	}
}

// wantProgress checks the (completed, total) of every common/Progress.
func wantProgress(t *testing.T, sink *progresstest.Sink, want [][2]int64) {
	t.Helper()
	var got [][2]int64
	for _, e := range sink.OfType(progress.TypeProgress) {
		if e.Details["unit"] != ProgressUnit {
			t.Errorf("progress unit %v", e.Details["unit"])
		}
		got = append(got, [2]int64{e.Details["completed"].(int64), e.Details["total"].(int64)})
	}
	if !slices.Equal(got, want) {
		t.Errorf("progress %v, want %v", got, want)
	}
}

func wantProgressEnd(t *testing.T, sink *progresstest.Sink, want [2]int64) {
	t.Helper()
	ps := sink.OfType(progress.TypeProgress)
	if len(ps) == 0 {
		t.Fatal("no progress")
	}
	last := ps[len(ps)-1]
	if got := [2]int64{last.Details["completed"].(int64), last.Details["total"].(int64)}; got != want {
		t.Errorf("last progress %v, want %v", got, want)
	}
}

// assertResourceSpans checks that each address has one span "<action>
// <address>" under the command span, whose times are those of the tool's
// start and end messages, and in which those events were recorded.
func assertResourceSpans(t *testing.T, c *capture, cmdSpan sdktrace.ReadOnlySpan, action string, addrs []string) {
	t.Helper()
	for _, addr := range addrs {
		s := only(t, c.spansNamed(action+" "+addr))
		if s.Parent().SpanID() != cmdSpan.SpanContext().SpanID() {
			t.Errorf("%s is not under the command span", s.Name())
		}
		if attr(s, "terraform.action") != action || attr(s, "terraform.resource.address") != addr {
			t.Errorf("%s attributes %v", s.Name(), s.Attributes())
		}
		for _, e := range c.sink.Events() {
			if e.Details["address"] != addr || e.Details["action"] != action {
				continue
			}
			switch e.EventName {
			case TypeApplyStarted:
				if !e.Timestamp.Equal(s.StartTime()) {
					t.Errorf("%s starts at %v, its ApplyStarted is at %v", s.Name(), s.StartTime(), e.Timestamp)
				}
			case TypeApplyCompleted, TypeApplyErrored:
				if !e.Timestamp.Equal(s.EndTime()) {
					t.Errorf("%s ends at %v, its %s is at %v", s.Name(), s.EndTime(), e.EventName, e.Timestamp)
				}
			default:
				continue
			}
			if e.SpanID != s.SpanContext().SpanID() {
				t.Errorf("%s of %s is not recorded in its span", e.EventName, addr)
			}
		}
	}
}

// assertNoSecret checks that no secret appears in any record, span, the
// Result or the error.
func assertNoSecret(t *testing.T, c *capture, res Result, err error, secrets ...string) {
	t.Helper()
	all := c.everything() + fmt.Sprintf("%+v %#v", res, res)
	if err != nil {
		all += err.Error()
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("the secret %q appears in the output", s)
		}
	}
	if c.pretty.String() == "" || c.json.String() == "" {
		t.Error("the exporters printed nothing: the check is void")
	}
}

func only(t *testing.T, spans []sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	t.Helper()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	return spans[0]
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// indexer returns a function giving the index of the first event of a type
// about an address.
func indexer(evs []progresstest.Event) func(typ, addr string) int {
	return func(typ, addr string) int {
		return slices.IndexFunc(evs, func(e progresstest.Event) bool {
			return e.EventName == typ && e.Details["address"] == addr
		})
	}
}

// actions returns the sorted actions of evs.
func actions(evs []progresstest.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Details["action"].(string))
	}
	slices.Sort(out)
	return out
}

func names(evs []progresstest.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventName
	}
	return out
}
