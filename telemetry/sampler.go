package telemetry

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/internal/otelset"
)

// samplerFromEnv is the sampler OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name, by the SDK's rules (which it applies
// only to the sampler it picks itself, and deferredProvider gives the
// SDK its own): always_on, always_off, traceidratio and their
// parentbased_ forms, a ratio between 0 and 1 (1 when it is left out);
// unset, parentbased_always_on. A name or ratio that does not read is an
// error, with the sampler the SDK would then use.
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1), nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 || v > 1 {
			return sdktrace.TraceIDRatioBased(1), fmt.Errorf("telemetry: OTEL_TRACES_SAMPLER_ARG %q is not a ratio between 0 and 1: sampling every trace", arg)
		}
		return sdktrace.TraceIDRatioBased(v), nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		return ratio()
	case "parentbased_traceidratio":
		s, err := ratio()
		return sdktrace.ParentBased(s), err
	}
	return sdktrace.ParentBased(sdktrace.AlwaysSample()), fmt.Errorf("telemetry: OTEL_TRACES_SAMPLER %q is not a sampler FreeCode knows: using parentbased_always_on", name)
}

// presetKey is the context key of the *deferredSpan replay makes the
// SDK's span of: presetIDs gives that span its IDs, presetSampler its
// sampling decision, those it was given on the call's path.
type presetKey struct{}

func presetOf(ctx context.Context) *deferredSpan {
	s, _ := ctx.Value(presetKey{}).(*deferredSpan)
	return s
}

// presetIDs is the SDK's ID generator of a deferredProvider: the IDs a
// span was given on the call's path; random ones otherwise.
type presetIDs struct{}

func (presetIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if s := presetOf(ctx); s != nil {
		return s.sc.TraceID(), s.sc.SpanID()
	}
	var g randomIDs
	return g.traceID(), g.spanID()
}

func (presetIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if s := presetOf(ctx); s != nil {
		return s.sc.SpanID()
	}
	var g randomIDs
	return g.spanID()
}

// presetSampler is the SDK's sampler of a deferredProvider: the decision
// the sampler made on the call's path (what the traceparent sent on
// says), not asked again; the sampler's own otherwise.
type presetSampler struct{ sdktrace.Sampler }

func (p presetSampler) ShouldSample(params sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if s := presetOf(params.ParentContext); s != nil {
		return sdktrace.SamplingResult{Decision: s.decision, Attributes: s.sampleAttrs, Tracestate: s.sc.TraceState()}
	}
	return p.Sampler.ShouldSample(params)
}

// randomIDs makes IDs as the SDK's default generator does: random, from
// math/rand/v2's generator, never all zeros.
type randomIDs struct{}

func (randomIDs) traceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

func (randomIDs) spanID() trace.SpanID { return otelset.NewSpanID() }
