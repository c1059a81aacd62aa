package otelcoltest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Export is what the collector's file exporters wrote, as plain values.
type Export struct {
	Spans   []Span
	Metrics []Metric
	Logs    []LogRecord
}

// Attrs are attributes by key, each value as the OTLP JSON typed it: a
// string, int64, float64, bool, []any, map[string]any or []byte.
type Attrs map[string]any

// Text returns the value of key as text ("" when absent): a string as
// it is, any other value as fmt prints it.
func (a Attrs) Text(key string) string {
	v, ok := a[key]
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Pick returns the attributes among keys that a has.
func (a Attrs) Pick(keys ...string) Attrs {
	out := Attrs{}
	for _, k := range keys {
		if v, ok := a[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Span is one span. Ids are lowercase hex, as the file exporter writes
// them ("" for none).
type Span struct {
	TraceID, SpanID, ParentSpanID string
	TraceState                    string
	Name                          string
	// Kind is "internal", "server", "client", "producer" or "consumer"
	// ("unspecified" for 0).
	Kind       string
	Start, End time.Time
	Attrs      Attrs
	// StatusCode is "unset", "ok" or "error".
	StatusCode    string
	StatusMessage string
	Events        []SpanEvent
	// Resource is the attributes of the resource that sent it, Scope the
	// name of its instrumentation scope.
	Resource Attrs
	Scope    string
}

// SpanEvent is an event of a span.
type SpanEvent struct {
	Name  string
	Time  time.Time
	Attrs Attrs
}

// Metric is one metric of one export (a cumulative metric is in each
// export with its totals so far; Export.Metric returns the last).
type Metric struct {
	Name, Unit, Description string
	// Type is "gauge", "sum", "histogram", "exponentialHistogram" or
	// "summary".
	Type string
	// Temporality is "delta" or "cumulative" for a sum or a histogram;
	// Monotonic says whether a sum is.
	Temporality string
	Monotonic   bool
	Points      []Point
	Resource    Attrs
	Scope       string
}

// Point is a data point of a metric.
type Point struct {
	Attrs Attrs
	// Value is a sum's or a gauge's value: an int64 or a float64.
	Value any
	// A histogram's count, sum, bounds and bucket counts.
	Count        uint64
	Sum          float64
	Bounds       []float64
	BucketCounts []uint64
}

// LogRecord is one log record: an event when EventName is set.
type LogRecord struct {
	EventName      string
	Time, Observed time.Time
	SeverityNumber int
	SeverityText   string
	// Body is the body's value as for Attrs; nil when there is none.
	Body            any
	Attrs           Attrs
	TraceID, SpanID string
	Resource        Attrs
	Scope           string
}

// SpansNamed returns the spans named name, in the order received.
func (e *Export) SpansNamed(name string) []Span {
	var out []Span
	for _, s := range e.Spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Span returns the one span with id (hex), or nil.
func (e *Export) Span(id string) *Span {
	for i := range e.Spans {
		if e.Spans[i].SpanID == id {
			return &e.Spans[i]
		}
	}
	return nil
}

// Metric returns the last metric named name received (nil: none): for a
// cumulative one, the totals at the exporter's last export.
func (e *Export) Metric(name string) *Metric {
	for i := len(e.Metrics) - 1; i >= 0; i-- {
		if e.Metrics[i].Name == name {
			return &e.Metrics[i]
		}
	}
	return nil
}

// Events returns the log records whose event name is name.
func (e *Export) Events(name string) []LogRecord {
	var out []LogRecord
	for _, r := range e.Logs {
		if r.EventName == name {
			out = append(out, r)
		}
	}
	return out
}

// The OTLP JSON of the three signals (OTLP's JSON mapping: lowerCamelCase
// names, 64-bit integers as decimal strings, enums as numbers, trace and
// span ids as hex).

type jsonResource struct {
	Attributes []jsonKV `json:"attributes"`
}

type jsonScope struct {
	Name string `json:"name"`
}

type jsonKV struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

type jsonTraces struct {
	ResourceSpans []struct {
		Resource   jsonResource `json:"resource"`
		ScopeSpans []struct {
			Scope jsonScope `json:"scope"`
			Spans []struct {
				TraceID           string    `json:"traceId"`
				SpanID            string    `json:"spanId"`
				ParentSpanID      string    `json:"parentSpanId"`
				TraceState        string    `json:"traceState"`
				Name              string    `json:"name"`
				Kind              int       `json:"kind"`
				StartTimeUnixNano jsonInt   `json:"startTimeUnixNano"`
				EndTimeUnixNano   jsonInt   `json:"endTimeUnixNano"`
				Attributes        []jsonKV  `json:"attributes"`
				Events            []jsonEvt `json:"events"`
				Status            struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"status"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type jsonEvt struct {
	Name         string   `json:"name"`
	TimeUnixNano jsonInt  `json:"timeUnixNano"`
	Attributes   []jsonKV `json:"attributes"`
}

type jsonPoint struct {
	Attributes     []jsonKV    `json:"attributes"`
	AsInt          *jsonInt    `json:"asInt"`
	AsDouble       *jsonFloat  `json:"asDouble"`
	Count          jsonInt     `json:"count"`
	Sum            jsonFloat   `json:"sum"`
	BucketCounts   []jsonInt   `json:"bucketCounts"`
	ExplicitBounds []jsonFloat `json:"explicitBounds"`
}

type jsonSeries struct {
	DataPoints             []jsonPoint `json:"dataPoints"`
	AggregationTemporality int         `json:"aggregationTemporality"`
	IsMonotonic            bool        `json:"isMonotonic"`
}

type jsonMetrics struct {
	ResourceMetrics []struct {
		Resource     jsonResource `json:"resource"`
		ScopeMetrics []struct {
			Scope   jsonScope `json:"scope"`
			Metrics []struct {
				Name                 string      `json:"name"`
				Unit                 string      `json:"unit"`
				Description          string      `json:"description"`
				Gauge                *jsonSeries `json:"gauge"`
				Sum                  *jsonSeries `json:"sum"`
				Histogram            *jsonSeries `json:"histogram"`
				ExponentialHistogram *jsonSeries `json:"exponentialHistogram"`
				Summary              *jsonSeries `json:"summary"`
			} `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

type jsonLogs struct {
	ResourceLogs []struct {
		Resource  jsonResource `json:"resource"`
		ScopeLogs []struct {
			Scope      jsonScope `json:"scope"`
			LogRecords []struct {
				TimeUnixNano         jsonInt         `json:"timeUnixNano"`
				ObservedTimeUnixNano jsonInt         `json:"observedTimeUnixNano"`
				SeverityNumber       int             `json:"severityNumber"`
				SeverityText         string          `json:"severityText"`
				Body                 json.RawMessage `json:"body"`
				Attributes           []jsonKV        `json:"attributes"`
				TraceID              string          `json:"traceId"`
				SpanID               string          `json:"spanId"`
				EventName            string          `json:"eventName"`
			} `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

func (e *Export) addTraces(b []byte) error {
	var m jsonTraces
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, rs := range m.ResourceSpans {
		res, err := attrs(rs.Resource.Attributes)
		if err != nil {
			return err
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				a, err := attrs(s.Attributes)
				if err != nil {
					return fmt.Errorf("span %q: %w", s.Name, err)
				}
				sp := Span{TraceID: strings.ToLower(s.TraceID), SpanID: strings.ToLower(s.SpanID), ParentSpanID: strings.ToLower(s.ParentSpanID),
					TraceState: s.TraceState, Name: s.Name, Kind: spanKind(s.Kind), Start: unixNano(s.StartTimeUnixNano), End: unixNano(s.EndTimeUnixNano),
					Attrs: a, StatusCode: statusCode(s.Status.Code), StatusMessage: s.Status.Message, Resource: res, Scope: ss.Scope.Name}
				for _, ev := range s.Events {
					ea, err := attrs(ev.Attributes)
					if err != nil {
						return err
					}
					sp.Events = append(sp.Events, SpanEvent{Name: ev.Name, Time: unixNano(ev.TimeUnixNano), Attrs: ea})
				}
				e.Spans = append(e.Spans, sp)
			}
		}
	}
	return nil
}

func (e *Export) addMetrics(b []byte) error {
	var m jsonMetrics
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, rm := range m.ResourceMetrics {
		res, err := attrs(rm.Resource.Attributes)
		if err != nil {
			return err
		}
		for _, sm := range rm.ScopeMetrics {
			for _, jm := range sm.Metrics {
				mt := Metric{Name: jm.Name, Unit: jm.Unit, Description: jm.Description, Resource: res, Scope: sm.Scope.Name}
				var series *jsonSeries
				for _, s := range []struct {
					typ    string
					series *jsonSeries
				}{{"gauge", jm.Gauge}, {"sum", jm.Sum}, {"histogram", jm.Histogram}, {"exponentialHistogram", jm.ExponentialHistogram}, {"summary", jm.Summary}} {
					if s.series != nil {
						mt.Type, series = s.typ, s.series
					}
				}
				if series == nil {
					return fmt.Errorf("metric %q has no data", jm.Name)
				}
				mt.Temporality = map[int]string{1: "delta", 2: "cumulative"}[series.AggregationTemporality]
				mt.Monotonic = series.IsMonotonic
				for _, jp := range series.DataPoints {
					a, err := attrs(jp.Attributes)
					if err != nil {
						return fmt.Errorf("metric %q: %w", jm.Name, err)
					}
					p := Point{Attrs: a, Count: uint64(jp.Count), Sum: float64(jp.Sum)}
					switch {
					case jp.AsInt != nil:
						p.Value = int64(*jp.AsInt)
					case jp.AsDouble != nil:
						p.Value = float64(*jp.AsDouble)
					}
					for _, c := range jp.BucketCounts {
						p.BucketCounts = append(p.BucketCounts, uint64(c))
					}
					for _, f := range jp.ExplicitBounds {
						p.Bounds = append(p.Bounds, float64(f))
					}
					mt.Points = append(mt.Points, p)
				}
				e.Metrics = append(e.Metrics, mt)
			}
		}
	}
	return nil
}

func (e *Export) addLogs(b []byte) error {
	var m jsonLogs
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, rl := range m.ResourceLogs {
		res, err := attrs(rl.Resource.Attributes)
		if err != nil {
			return err
		}
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				a, err := attrs(r.Attributes)
				if err != nil {
					return fmt.Errorf("log record %q: %w", r.EventName, err)
				}
				var body any
				if len(r.Body) > 0 {
					if body, err = anyValue(r.Body); err != nil {
						return fmt.Errorf("log record %q: body: %w", r.EventName, err)
					}
				}
				e.Logs = append(e.Logs, LogRecord{EventName: r.EventName, Time: unixNano(r.TimeUnixNano), Observed: unixNano(r.ObservedTimeUnixNano),
					SeverityNumber: r.SeverityNumber, SeverityText: r.SeverityText, Body: body, Attrs: a,
					TraceID: strings.ToLower(r.TraceID), SpanID: strings.ToLower(r.SpanID), Resource: res, Scope: sl.Scope.Name})
			}
		}
	}
	return nil
}

func attrs(kvs []jsonKV) (Attrs, error) {
	a := Attrs{}
	for _, kv := range kvs {
		v, err := anyValue(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", kv.Key, err)
		}
		a[kv.Key] = v
	}
	return a, nil
}

// anyValue is the Go value of an OTLP AnyValue: {"stringValue": …} and
// its kin; nil for an empty one.
func anyValue(raw json.RawMessage) (any, error) {
	var v struct {
		StringValue *string    `json:"stringValue"`
		IntValue    *jsonInt   `json:"intValue"`
		DoubleValue *jsonFloat `json:"doubleValue"`
		BoolValue   *bool      `json:"boolValue"`
		BytesValue  *string    `json:"bytesValue"`
		ArrayValue  *struct {
			Values []json.RawMessage `json:"values"`
		} `json:"arrayValue"`
		KvlistValue *struct {
			Values []jsonKV `json:"values"`
		} `json:"kvlistValue"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	switch {
	case v.StringValue != nil:
		return *v.StringValue, nil
	case v.IntValue != nil:
		return int64(*v.IntValue), nil
	case v.DoubleValue != nil:
		return float64(*v.DoubleValue), nil
	case v.BoolValue != nil:
		return *v.BoolValue, nil
	case v.BytesValue != nil:
		return base64.StdEncoding.DecodeString(*v.BytesValue)
	case v.ArrayValue != nil:
		out := []any{}
		for _, e := range v.ArrayValue.Values {
			x, err := anyValue(e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case v.KvlistValue != nil:
		a, err := attrs(v.KvlistValue.Values)
		return map[string]any(a), err
	}
	return nil, nil
}

// jsonInt is a 64-bit integer of OTLP JSON: a decimal string, or a
// number.
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		*n = jsonInt(u) // a uint64 (a time, a count) past MaxInt64 never comes
		return nil
	}
	i, err := strconv.ParseInt(s, 10, 64)
	*n = jsonInt(i)
	return err
}

// jsonFloat is a double of OTLP JSON: a number, or "NaN", "Infinity" and
// "-Infinity" as strings.
type jsonFloat float64

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	switch s {
	case "Infinity":
		s = "+Inf"
	case "-Infinity":
		s = "-Inf"
	}
	x, err := strconv.ParseFloat(s, 64)
	*f = jsonFloat(x)
	return err
}

func unixNano(n jsonInt) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(n))
}

func spanKind(k int) string {
	if s, ok := map[int]string{0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}[k]; ok {
		return s
	}
	return "kind " + strconv.Itoa(k)
}

func statusCode(c int) string {
	if s, ok := map[int]string{0: "unset", 1: "ok", 2: "error"}[c]; ok {
		return s
	}
	return "code " + strconv.Itoa(c)
}

// Path returns the names of sp and its ancestors, root first, joined by
// " > "; a parent that is not among the spans (a remote one, or one not
// exported) is "remote:<its id>".
func (e *Export) Path(sp Span) string {
	names := []string{sp.Name}
	for seen := 0; sp.ParentSpanID != "" && seen < len(e.Spans); seen++ {
		parent := e.Span(sp.ParentSpanID)
		if parent == nil {
			names = append(names, "remote:"+sp.ParentSpanID)
			break
		}
		sp = *parent
		names = append(names, sp.Name)
	}
	slices.Reverse(names)
	return strings.Join(names, " > ")
}

// From returns the spans whose resource's service.name is service.
func (e *Export) From(service string) []Span {
	var out []Span
	for _, s := range e.Spans {
		if s.Resource.Text("service.name") == service {
			out = append(out, s)
		}
	}
	return out
}
