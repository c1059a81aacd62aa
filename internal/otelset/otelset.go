// Package otelset holds what keeps a tool call's telemetry cheap for the
// call: the attribute sets of metric measurements, made into a set
// (sorted, deduplicated, hashed, which the SDK does on every
// WithAttributes) once per distinct value of the fields they are made
// of, so that a measurement costs a map lookup; and the seam by which a
// call's spans and measurements are made after it, of values its path
// kept (later.go).
package otelset

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// maxSets bounds a Cache: past it, sets are made and not kept (a
// measurement then costs what WithAttributes does).
const maxSets = 4096

// Cache holds the measurement options of the attribute sets made of keys
// of type K (a struct of the attributes' values). The zero Cache is
// ready; its methods are safe for concurrent use.
type Cache[K comparable] struct {
	mu sync.RWMutex
	m  map[K]metric.MeasurementOption
}

// Get returns the option of k's attribute set, made by attrs the first
// time k is seen.
func (c *Cache[K]) Get(k K, attrs func() []attribute.KeyValue) metric.MeasurementOption {
	c.mu.RLock()
	o, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	o = metric.WithAttributeSet(attribute.NewSet(attrs()...))
	c.mu.Lock()
	if c.m == nil {
		c.m = map[K]metric.MeasurementOption{}
	}
	if len(c.m) < maxSets {
		c.m[k] = o
	}
	c.mu.Unlock()
	return o
}
